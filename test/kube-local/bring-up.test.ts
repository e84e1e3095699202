import { execFile, spawn, type ChildProcess } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, symlinkSync, writeFileSync, chmodSync, copyFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { KUBE_LOCAL_SCRIPT } from './kube-local.ts'

/**
 * scripts/kube-local.sh's bring-up itself: it holds under CPU load (CI starts
 * it while images build and unit tests run), and a failed `up` stops what it
 * started. Each test runs a control plane of its own (its own state folder and
 * ports) beside the one the k8s project's global setup started.
 */

const TOOLS = process.env.KUBE_LOCAL_TOOLS ?? path.join(path.dirname(KUBE_LOCAL_SCRIPT), '..', '.tools', 'kube')
const COMPONENTS = ['etcd', 'kube-apiserver', 'kube-controller-manager', 'kube-scheduler', 'kwok']
const cleanups: (() => Promise<void> | void)[] = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})

function script(command: string, env: Record<string, string>): Promise<{ code: number; output: string }> {
  return new Promise((resolve) => {
    execFile(
      'bash',
      [KUBE_LOCAL_SCRIPT, command],
      { env: { ...process.env, PATH: `${path.dirname(process.execPath)}:${process.env.PATH ?? ''}`, ...env }, maxBuffer: 16 * 1024 * 1024 },
      (err, stdout, stderr) => resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, output: stdout + stderr }),
    )
  })
}

/** A state folder of the test's own; `down` and removal after the test. */
function stateFolder(env: Record<string, string> = {}): Record<string, string> {
  const state = mkdtempSync(path.join(os.tmpdir(), 'kube-bring-up-'))
  const vars = { KUBE_LOCAL_STATE: state, ...env }
  cleanups.push(async () => {
    await script('down', vars)
    rmSync(state, { recursive: true, force: true })
  })
  return vars
}

/** The pids the state folder names that are still alive. */
function alive(state: string): string[] {
  if (!existsSync(state)) return []
  return readdirSync(state)
    .filter((file) => file.endsWith('.pid'))
    .map((file) => readFileSync(path.join(state, file), 'utf8').trim())
    .filter((pid) => {
      try {
        process.kill(Number(pid), 0)
        return true
      } catch {
        return false
      }
    })
}

/** Busy loops on every core until stopped (or after 5 minutes, whatever happens to the test). */
function loadEveryCore(): void {
  const burners: ChildProcess[] = os
    .cpus()
    .map(() => spawn(process.execPath, ['-e', 'setTimeout(() => process.exit(), 300_000); for (;;) {}'], { stdio: 'ignore' }))
  cleanups.push(() => burners.forEach((burner) => burner.kill('SIGKILL')))
}

describe('kube-local - bring-up', () => {
  it('bring-up - under CPU load on every core the control plane comes up, and down stops it', async () => {
    const env = stateFolder()
    loadEveryCore()
    const up = await script('up', env)
    expect(up.code, up.output).toBe(0)
    const status = await script('status', env)
    for (const component of COMPONENTS) expect(status.output).toContain(`${component} running`)
    await script('down', env)
    expect(alive(env.KUBE_LOCAL_STATE!)).toEqual([])
  }, 300_000)

  it('bring-up - a start that stalls before its exec (as under I/O load) is not taken for an exit', async () => {
    // setsid behind a shim that waits 2 s before it execs: each component's pid runs the shim, then setsid, then the binary.
    const shims = mkdtempSync(path.join(os.tmpdir(), 'kube-shims-'))
    cleanups.push(() => rmSync(shims, { recursive: true, force: true }))
    const setsid =
      (await new Promise<string>((resolve) => execFile('sh', ['-c', 'command -v setsid'], (_err, out) => resolve(out.trim())))) || '/usr/bin/setsid'
    writeFileSync(path.join(shims, 'setsid'), `#!/bin/sh\nsleep 2\nexec ${setsid} "$@"\n`)
    chmodSync(path.join(shims, 'setsid'), 0o755)
    const env = stateFolder({ PATH: `${shims}:${path.dirname(process.execPath)}:${process.env.PATH ?? ''}` })
    const up = await script('up', env)
    expect(up.code, up.output).toBe(0)
    const status = await script('status', env)
    for (const component of COMPONENTS) expect(status.output).toContain(`${component} running`)
  }, 300_000)

  it('bring-up - a component that exits fails up with its name, and what up started is stopped', async () => {
    // The cached binaries, but a kube-scheduler that dies at once.
    const tools = mkdtempSync(path.join(os.tmpdir(), 'kube-tools-'))
    cleanups.push(() => rmSync(tools, { recursive: true, force: true }))
    const bin = path.join(tools, 'bin')
    await import('node:fs/promises').then((fs) => fs.mkdir(bin))
    for (const entry of readdirSync(path.join(TOOLS, 'bin'))) {
      if (entry.startsWith('.')) copyFileSync(path.join(TOOLS, 'bin', entry), path.join(bin, entry))
      else if (entry !== 'kube-scheduler') symlinkSync(path.join(TOOLS, 'bin', entry), path.join(bin, entry))
    }
    writeFileSync(path.join(bin, 'kube-scheduler'), '#!/bin/sh\necho "scheduler refuses to start" >&2\nexit 3\n')
    chmodSync(path.join(bin, 'kube-scheduler'), 0o755)
    const env = stateFolder({ KUBE_LOCAL_TOOLS: tools })
    const up = await script('up', env)
    expect(up.code).not.toBe(0)
    expect(up.output).toMatch(/kube-scheduler exited/)
    expect(up.output).toContain('scheduler refuses to start')
    expect(up.output).toContain('stopping what it started')
    expect(alive(env.KUBE_LOCAL_STATE!)).toEqual([])
  }, 300_000)
})
