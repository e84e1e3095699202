/**
 * Global setup of the vitest project `images`: builds the gateway, controller
 * and runner images once (scripts/images.sh build: podman, a base made
 * locally with mmdebstrap). A failed build is not a skip: its message is
 * handed to the test files, whose beforeAll throws it, so every test fails
 * with the script's own words.
 */
import { spawn } from 'node:child_process'
import { closeSync, openSync, readFileSync } from 'node:fs'
import { mkdtemp } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import type { TestProject } from 'vitest/node'
import { IMAGES_SCRIPT, type ImagesBuild } from './podman.ts'

declare module 'vitest' {
  export interface ProvidedContext {
    imagesBuild: ImagesBuild
  }
}

export default async function setup(project: TestProject): Promise<void> {
  const log = path.join(await mkdtemp(path.join(tmpdir(), 'images-')), 'images.log')
  console.log(`[images] building the images (scripts/images.sh build; cold about 2 min), log: ${log}`)
  const started = Date.now()
  const fd = openSync(log, 'a')
  const code = await new Promise<number | null>((resolve) => {
    // The script makes the base with the Node that runs vitest (Node 24), first on PATH.
    const child = spawn('bash', [IMAGES_SCRIPT, 'build'], { env: { ...process.env, PATH: `${path.dirname(process.execPath)}:${process.env.PATH ?? ''}` }, stdio: ['ignore', fd, fd] })
    child.once('exit', resolve)
    child.once('error', () => resolve(null))
  }).finally(() => closeSync(fd))
  const seconds = (Date.now() - started) / 1000
  const output = readFileSync(log, 'utf8')
  const build: ImagesBuild = code === 0 ? { seconds, log: output } : { seconds, log: output, error: `scripts/images.sh build failed (exit ${code}) after ${seconds.toFixed(0)} s; the end of ${log}:\n${output.split('\n').slice(-30).join('\n')}` }
  console.log(code === 0 ? `[images] built in ${seconds.toFixed(1)} s\n${output.trim()}` : `[images] ${build.error}`)
  project.provide('imagesBuild', build)
}
