import { execFile } from 'node:child_process'

/** The probe gives up after this long (a bwrap that hangs is a bwrap that does not work here). */
const PROBE_TIMEOUT_MS = 5_000

export type ProbeResult = { ok: true } | { ok: false; reason: string }

/**
 * Whether bubblewrap can make a session sandbox on this machine: runs `true`
 * in the same kind of sandbox (read-only system, new /dev and /proc, private
 * /tmp, PID and network namespaces, no capabilities). Fails without user
 * namespaces, without bwrap, or in a container that forbids mounts.
 */
export function probeBwrap(command: string): Promise<ProbeResult> {
  const args = [
    '--ro-bind',
    '/',
    '/',
    '--dev',
    '/dev',
    '--proc',
    '/proc',
    '--tmpfs',
    '/tmp',
    '--unshare-pid',
    '--unshare-net',
    '--die-with-parent',
    '--new-session',
    '--cap-drop',
    'ALL',
    'true',
  ]
  return new Promise((resolve) => {
    execFile(command, args, { timeout: PROBE_TIMEOUT_MS, env: { PATH: process.env.PATH ?? '/usr/bin:/bin' } }, (err, _stdout, stderr) => {
      if (!err) return resolve({ ok: true })
      const code = (err as NodeJS.ErrnoException).code
      const why = code === 'ENOENT' ? `${command} is not installed (Debian: apt-get install bubblewrap)` : stderr.trim() || err.message
      resolve({ ok: false, reason: why })
    })
  })
}
