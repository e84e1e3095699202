import { readFileSync } from 'node:fs'
import { setTimeout as sleep } from 'node:timers/promises'
import { SESSION_TAG_VAR } from './env.ts'
import { parseStat, sessionProcesses, type ProcessInfo } from './tree.ts'

/** How often the survivors are looked for while waiting out the grace period. */
const POLL_MS = 50
/** Kill passes before giving up: each pass catches processes forked during the previous one. */
const MAX_KILL_PASSES = 20

export interface TerminateResult {
  /** Processes still alive after every pass (should be empty). */
  survivors: number[]
  /** Whether SIGKILL was needed. */
  forced: boolean
}

/**
 * Ends every process of a session: SIGTERM to each process group in it (tool
 * commands run in groups of their own), SIGKILL after `graceMs` to whatever
 * is left, repeated until nothing carrying the session's tag remains.
 */
export async function terminateSession(leaderPid: number | undefined, tag: string, graceMs: number): Promise<TerminateResult> {
  let rows = await sessionProcesses(leaderPid, SESSION_TAG_VAR, tag)
  if (rows.length === 0) return { survivors: [], forced: false }
  signalAll(rows, 'SIGTERM')
  const deadline = Date.now() + graceMs
  while (Date.now() < deadline) {
    await sleep(POLL_MS)
    rows = await sessionProcesses(leaderPid, SESSION_TAG_VAR, tag)
    if (rows.length === 0) return { survivors: [], forced: false }
  }
  for (let pass = 0; pass < MAX_KILL_PASSES && rows.length > 0; pass++) {
    signalAll(rows, 'SIGKILL')
    await sleep(pass === 0 ? 10 : POLL_MS)
    rows = await sessionProcesses(leaderPid, SESSION_TAG_VAR, tag)
  }
  return { survivors: rows.map((row) => row.pid), forced: true }
}

/** SIGKILL to the process group led by `pid` (the agent CLI's): the fallback when the process table cannot be read. */
export function killProcessGroup(pid: number): void {
  if (pid > 1 && pid !== OWN_PGID) trySignal(-pid, 'SIGKILL')
}

function signalAll(rows: readonly ProcessInfo[], signal: NodeJS.Signals): void {
  // A session sandbox's bwrap would answer SIGTERM by dying, and its death SIGKILLs everything
  // inside: it gets only the SIGKILL, so the processes inside get their grace period first.
  const targets = signal === 'SIGKILL' ? rows : rows.filter((row) => row.name !== SANDBOX_LAUNCHER)
  const launcherGroups = new Set(rows.filter((row) => row.name === SANDBOX_LAUNCHER && row.pid === row.pgid).map((row) => row.pgid))
  const groups = new Set(targets.map((row) => row.pgid))
  for (const pgid of groups) {
    // Never signal the service's own group, even if a row somehow points at it.
    if (pgid > 1 && pgid !== OWN_PGID && (signal === 'SIGKILL' || !launcherGroups.has(pgid))) trySignal(-pgid, signal)
  }
  for (const row of targets) trySignal(row.pid, signal)
}

/** The command name of the sandbox launcher (runner/sandbox-exec). */
const SANDBOX_LAUNCHER = 'bwrap'

function trySignal(target: number, signal: NodeJS.Signals): void {
  try {
    process.kill(target, signal)
  } catch {
    // already gone
  }
}

/** The service's own process group, which a session's signals must never reach. */
const OWN_PGID = parseStat(readFileSync('/proc/self/stat', 'utf8'))?.pgid ?? process.pid
