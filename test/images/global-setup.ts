/**
 * Global setup of the vitest project `images`: builds the gateway, controller
 * and runner images once (scripts/images.sh build: podman, a base made
 * locally with mmdebstrap). A failed build is not a skip: its message is
 * handed to the test files, whose beforeAll throws it, so every test fails
 * with the script's own words. Then it serves podman's Docker API on a socket
 * of its own (not the default one, which would turn every NATS fixture of the
 * suite to containers) for the testcontainers tests, and stops it at the end.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { existsSync } from 'node:fs'
import { closeSync, openSync, readFileSync } from 'node:fs'
import { mkdtemp } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import type { TestProject } from 'vitest/node'
import { IMAGES_SCRIPT, PODMAN_ENV, type ImagesBuild } from './podman.ts'

declare module 'vitest' {
  export interface ProvidedContext {
    imagesBuild: ImagesBuild
  }
}

/** `podman system service` on `socket`; resolves once the socket exists. */
async function serveDockerApi(socket: string): Promise<ChildProcess> {
  const child = spawn('podman', ['system', 'service', '--time=0', `unix://${socket}`], { env: PODMAN_ENV, stdio: 'ignore' })
  for (let i = 0; i < 100 && !existsSync(socket); i++) await new Promise((resolve) => setTimeout(resolve, 100))
  if (!existsSync(socket)) {
    child.kill()
    throw new Error(`podman system service did not open ${socket} within 10 s`)
  }
  return child
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const scratch = await mkdtemp(path.join(tmpdir(), 'images-'))
  const log = path.join(scratch, 'images.log')
  console.log(`[images] building the images (scripts/images.sh build; cold about 2 min), log: ${log}`)
  const started = Date.now()
  const fd = openSync(log, 'a')
  const code = await new Promise<number | null>((resolve) => {
    // The script makes the base with the Node that runs vitest (Node 24), first on PATH.
    const child = spawn('bash', [IMAGES_SCRIPT, 'build'], {
      env: { ...process.env, PATH: `${path.dirname(process.execPath)}:${process.env.PATH ?? ''}` },
      stdio: ['ignore', fd, fd],
    })
    child.once('exit', resolve)
    child.once('error', () => resolve(null))
  }).finally(() => closeSync(fd))
  const seconds = (Date.now() - started) / 1000
  const output = readFileSync(log, 'utf8')
  let service: ChildProcess | undefined
  const socket = path.join(scratch, 'podman.sock')
  if (code === 0) service = await serveDockerApi(socket)
  const build: ImagesBuild =
    code === 0
      ? { seconds, log: output, dockerHost: `unix://${socket}` }
      : {
          seconds,
          log: output,
          error: `scripts/images.sh build failed (exit ${code}) after ${seconds.toFixed(0)} s; the end of ${log}:\n${output.split('\n').slice(-30).join('\n')}`,
        }
  console.log(code === 0 ? `[images] built in ${seconds.toFixed(1)} s\n${output.trim()}` : `[images] ${build.error}`)
  project.provide('imagesBuild', build)
  return async () => {
    service?.kill()
  }
}
