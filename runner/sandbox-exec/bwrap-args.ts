import path from 'node:path'
import type { EngineNetwork } from './config.ts'

/** One mount on top of the read-only system view, applied in order. */
export type Mount =
  /** An empty private directory over `path`. */
  | { kind: 'tmpfs'; path: string }
  /** An unreadable node over the file `path`. */
  | { kind: 'hide-file'; path: string }
  | { kind: 'ro'; source: string; dest: string }
  | { kind: 'rw'; path: string }

/** Directories every sandbox gets empty and private. */
export const PRIVATE_DIRS = ['/tmp', '/var/tmp', '/run'] as const

/** What is on the host at a path: a directory, something else, or nothing. */
export type PathKind = 'dir' | 'file' | undefined

/** The paths of one session's sandbox, before their existence is known. */
export interface MountInput {
  /** Hidden first, as wholes (the service's HOME; /root and /home when it runs as root). */
  hideBroad: readonly string[]
  /** Programs the sandbox must still run though they lie in a hidden or private directory: bound read-only at the same path. */
  reveal: readonly string[]
  /** The service's own data, hidden after the reveals (so a revealed code root does not show its data directory). */
  hideData: readonly string[]
  /** Bound read-write at the same path: the sandbox directory, the CLI state directory. */
  readWrite: readonly string[]
  /** Bound read-only last: credentials, the network gate. */
  readOnly: readonly { source: string; dest: string }[]
}

/**
 * The mounts of a session, in the order that makes each layer win over the
 * one before: private dirs, broad hides, reveals, data hides, the session's
 * own read-write directories, read-only binds. Paths that do not exist on the
 * host are left out (bwrap cannot make mount points in the read-only system);
 * a reveal is kept only where something above hid it, a hide only where
 * something would show.
 */
export function planMounts(input: MountInput, kindOf: (p: string) => PathKind): Mount[] {
  const mounts: Mount[] = []
  const hiddenSoFar: string[] = [...PRIVATE_DIRS]
  const revealed: string[] = []
  const hide = (paths: readonly string[]) => {
    for (const p of [...new Set(paths.map((x) => path.resolve(x)))].sort(byDepth)) {
      // Already out of sight, unless a reveal brought its tree back (the code root under /tmp, say).
      if (hiddenSoFar.some((h) => isWithin(p, h)) && !revealed.some((r) => isWithin(p, r))) continue
      const kind = kindOf(p)
      if (kind === 'dir') mounts.push({ kind: 'tmpfs', path: p })
      else if (kind === 'file') mounts.push({ kind: 'hide-file', path: p })
      else continue
      hiddenSoFar.push(p)
    }
  }
  hide(input.hideBroad)
  for (const p of new Set(input.reveal.map((x) => path.resolve(x)))) {
    if (hiddenSoFar.some((h) => isWithin(p, h)) && kindOf(p) !== undefined) {
      mounts.push({ kind: 'ro', source: p, dest: p })
      revealed.push(p)
    }
  }
  // Data under a broad hide stays hidden unless a reveal showed its tree again.
  const broad = hiddenSoFar.splice(PRIVATE_DIRS.length)
  hide(input.hideData.filter((p) => !broad.some((b) => isWithin(path.resolve(p), b)) || revealed.some((r) => isWithin(path.resolve(p), r))))
  for (const p of [...new Set(input.readWrite.map((x) => path.resolve(x)))].sort(byDepth)) {
    if (kindOf(p) === 'dir') mounts.push({ kind: 'rw', path: p })
  }
  for (const bind of input.readOnly) {
    if (kindOf(bind.source) !== undefined) mounts.push({ kind: 'ro', source: bind.source, dest: bind.dest })
  }
  return mounts
}

/**
 * bwrap's arguments (before the command): the whole system read-only; new
 * /dev and /proc (the /proc of the session's own PID namespace: no other
 * process, no other environ); private /tmp, /var/tmp, /run; the mounts; its
 * own PID, IPC, UTS and cgroup namespaces, and a network namespace with only
 * loopback unless the network is `open`; hidden directories read-only; a session of its own (no terminal
 * to inject into), no capabilities, and death with the runner.
 */
export function bwrapArgs(mounts: readonly Mount[], network: EngineNetwork, cwd: string): string[] {
  const args = ['--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc']
  for (const dir of PRIVATE_DIRS) args.push('--tmpfs', dir)
  for (const mount of mounts) {
    switch (mount.kind) {
      case 'tmpfs':
        args.push('--tmpfs', mount.path)
        break
      case 'hide-file':
        args.push('--ro-bind', '/dev/null', mount.path)
        break
      case 'rw':
        args.push('--bind', mount.path, mount.path)
        break
      case 'ro':
        args.push('--ro-bind', mount.source, mount.dest)
        break
    }
  }
  // A hidden directory is empty and read-only (binds inside it were made above and stay writable).
  for (const mount of mounts) if (mount.kind === 'tmpfs') args.push('--remount-ro', mount.path)
  args.push('--unshare-pid', '--unshare-ipc', '--unshare-uts', '--unshare-cgroup-try')
  if (network !== 'open') args.push('--unshare-net')
  args.push('--die-with-parent', '--new-session', '--cap-drop', 'ALL', '--chdir', cwd)
  return args
}

function byDepth(a: string, b: string): number {
  return a.split('/').length - b.split('/').length || a.localeCompare(b)
}

/** Whether `child` is `parent` or lies inside it (both absolute and normalized). */
export function isWithin(child: string, parent: string): boolean {
  return child === parent || child.startsWith(parent === '/' ? '/' : `${parent}/`)
}
