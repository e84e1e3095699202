/**
 * The comparison runs in a network namespace of its own whose only interface is
 * loopback. HotPlex listens on every interface and cannot be told an address;
 * in such a namespace "every interface" is loopback, so nothing it serves is
 * reachable from outside the machine, without patching it. Every other system
 * of the run binds loopback anyway and behaves the same inside.
 */
import { spawnSync } from 'node:child_process'
import os from 'node:os'

/** Whether every network interface this process sees is loopback. */
export function onlyLoopback(interfaces = os.networkInterfaces()): boolean {
  return Object.values(interfaces).every((addresses) => (addresses ?? []).every((address) => address.internal))
}

/** Set in the re-executed process, so a namespace that did not take is not entered twice. */
const MARK = 'AR_BENCH_PRIVATE_NETWORK'

/**
 * Runs this script again in a new network namespace with loopback up, and
 * returns its exit code; or returns the reason it cannot (then the caller goes
 * on where it is). Root makes the namespace directly; anyone else through a
 * user namespace, where the machine allows one.
 */
export function rerunInPrivateNetwork(): { exitCode: number } | { reason: string } {
  if (process.env[MARK]) return { reason: 'the private network namespace has interfaces other than loopback' }
  const flags = process.getuid?.() === 0 ? ['--net'] : ['--map-root-user', '--net']
  const probe = spawnSync('unshare', [...flags, 'ip', 'link', 'set', 'lo', 'up'], { encoding: 'utf8' })
  if (probe.error || probe.status !== 0) return { reason: `\`unshare ${flags.join(' ')}\` failed: ${(probe.error?.message ?? probe.stderr).trim()}` }
  const script = 'ip link set lo up && exec "$@"'
  const run = spawnSync('unshare', [...flags, 'sh', '-c', script, 'sh', process.execPath, ...process.execArgv, ...process.argv.slice(1)], {
    stdio: 'inherit',
    env: { ...process.env, [MARK]: '1' },
  })
  return { exitCode: run.status ?? 1 }
}
