/**
 * Global setup of the vitest project `k8s`: one real control plane for the
 * whole run (scripts/kube-local.sh up: etcd, kube-apiserver with RBAC and
 * PodSecurity, controller manager, scheduler, kwok), torn down at the end.
 *
 * A failed bring-up does not abort the run and is not a skip: the error is
 * handed to the test files, whose beforeAll throws it, so every k8s test
 * fails with the script's own message and the end of its log.
 */
import { spawn } from 'node:child_process'
import { closeSync, openSync, readFileSync, rmSync } from 'node:fs'
import { mkdtemp } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import type { TestProject } from 'vitest/node'
import { KUBE_LOCAL_SCRIPT, type KubeLocal } from './kube-local.ts'

declare module 'vitest' {
  export interface ProvidedContext {
    kubeLocal: KubeLocal
  }
}

function run(command: string, env: NodeJS.ProcessEnv, log: string): Promise<number | null> {
  const fd = openSync(log, 'a')
  try {
    const child = spawn('bash', [KUBE_LOCAL_SCRIPT, command], { env, stdio: ['ignore', fd, fd] })
    return new Promise((resolve) => {
      child.once('exit', (code) => resolve(code))
      child.once('error', () => resolve(null))
    })
  } finally {
    closeSync(fd)
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const state = await mkdtemp(path.join(tmpdir(), 'kube-local-'))
  const log = path.join(state, 'kube-local.log')
  // The script unpacks helm with `node`: the one running vitest (Node >= 22), first on PATH.
  const env = {
    ...process.env,
    PATH: `${path.dirname(process.execPath)}:${process.env.PATH ?? ''}`,
    KUBE_LOCAL_STATE: state,
    // Should this process die without its teardown, the control plane follows it.
    KUBE_LOCAL_OWNER_PID: String(process.pid),
  }
  const started = Date.now()
  console.log(`[k8s] starting a local control plane (scripts/kube-local.sh up; a cold build of kube-apiserver takes 10-25 min), log: ${log}`)
  const code = await run('up', env, log)
  const seconds = (Date.now() - started) / 1000
  const output = readFileSync(log, 'utf8')
  const kubeLocal: KubeLocal =
    code === 0
      ? {
          kubeconfig: path.join(state, 'kubeconfig'),
          bin: path.join(path.dirname(KUBE_LOCAL_SCRIPT), '..', '.tools', 'kube', 'bin'),
          state,
          upSeconds: seconds,
        }
      : {
          error: `scripts/kube-local.sh up failed (exit ${code}) after ${seconds.toFixed(0)} s; the end of ${log}:\n${output.split('\n').slice(-30).join('\n')}`,
          state,
          upSeconds: seconds,
        }
  if (process.env.KUBE_LOCAL_TOOLS) kubeLocal.bin = path.join(process.env.KUBE_LOCAL_TOOLS, 'bin')
  console.log(code === 0 ? `[k8s] control plane up in ${seconds.toFixed(1)} s` : `[k8s] ${kubeLocal.error}`)
  project.provide('kubeLocal', kubeLocal)
  return async () => {
    // `down` removes the state folder, the log with it: its own output goes beside it.
    const downLog = `${state}-down.log`
    const code = await run('down', env, downLog)
    if (code !== 0) console.error(`[k8s] scripts/kube-local.sh down exited ${code}:\n${readFileSync(downLog, 'utf8')}`)
    else rmSync(downLog, { force: true })
  }
}
