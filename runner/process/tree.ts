import { readdir, readFile } from 'node:fs/promises'
import { setTimeout as sleep } from 'node:timers/promises'
import { SharedRun } from './shared-run.ts'

/** One row of the process table. */
export interface ProcessInfo {
  pid: number
  ppid: number
  pgid: number
  /** The command name (`comm`, at most 15 bytes). */
  name?: string
  /** `R`, `S`, `Z` (zombie), … */
  state: string
  /** The value of the scan's tag variable in the process's environment, when it has one. */
  tag?: string
}

/** Files open at once during a scan: however many sessions end together, a scan never runs the service out of descriptors. */
const SCAN_CONCURRENCY = 16
/** A scan that cannot list /proc (descriptors exhausted by something else) tries again this many times, this far apart (growing). */
const SCAN_RETRIES = 4
const SCAN_RETRY_MS = 50

/** Parses /proc/<pid>/stat; the command name may contain spaces and parentheses. */
export function parseStat(text: string): ProcessInfo | undefined {
  const close = text.lastIndexOf(')')
  if (close < 0) return undefined
  const pid = Number.parseInt(text, 10)
  const fields = text.slice(close + 2).split(' ')
  const state = fields[0]
  const ppid = Number(fields[1])
  const pgid = Number(fields[2])
  if (!state || !Number.isInteger(pid) || !Number.isInteger(ppid) || !Number.isInteger(pgid)) return undefined
  const open = text.indexOf('(')
  return { pid, ppid, pgid, state, ...(open >= 0 && open < close && { name: text.slice(open + 1, close) }) }
}

/** The value of `name` in a NUL-separated environment block, if it is set. */
export function environValue(environ: Buffer, name: string): string | undefined {
  const key = Buffer.from(`${name}=`)
  for (let start = 0; start < environ.length; ) {
    let end = environ.indexOf(0, start)
    if (end < 0) end = environ.length
    if (end - start >= key.length && environ.subarray(start, start + key.length).equals(key)) return environ.toString('utf8', start + key.length, end)
    start = end + 1
  }
  return undefined
}

/** Pids of `root` and all its descendants, by parent links. */
export function descendants(rows: readonly ProcessInfo[], root: number): Set<number> {
  const children = new Map<number, number[]>()
  for (const row of rows) {
    const list = children.get(row.ppid)
    if (list) list.push(row.pid)
    else children.set(row.ppid, [row.pid])
  }
  const found = new Set<number>()
  const stack = rows.some((row) => row.pid === root) ? [root] : []
  while (stack.length > 0) {
    const pid = stack.pop()!
    if (found.has(pid)) continue
    found.add(pid)
    stack.push(...(children.get(pid) ?? []))
  }
  return found
}

/** The rows of `leaderPid`'s tree plus every row carrying `tag` (processes that left the tree keep their environment). */
export function sessionRows(rows: readonly ProcessInfo[], leaderPid: number | undefined, tag: string): ProcessInfo[] {
  const pids = leaderPid === undefined ? new Set<number>() : descendants(rows, leaderPid)
  return rows.filter((row) => row.pid !== process.pid && (row.tag === tag || pids.has(row.pid)))
}

/** One process-table scan at a time per tag variable. */
const scans = new Map<string, SharedRun<ProcessInfo[]>>()

/** Every live (non-zombie) process this user can see, with its `tagName` tag; concurrent callers share scans. */
export function processTable(tagName: string): Promise<ProcessInfo[]> {
  let shared = scans.get(tagName)
  if (!shared) scans.set(tagName, (shared = new SharedRun(() => scan(tagName))))
  return shared.get()
}

/** Sessions' processes by their leaders and tags, from one scan. */
export async function sessionProcesses(leaderPid: number | undefined, tagName: string, tag: string): Promise<ProcessInfo[]> {
  return sessionRows(await processTable(tagName), leaderPid, tag)
}

async function scan(tagName: string): Promise<ProcessInfo[]> {
  const names = await listProc()
  const pids = names.filter((name) => /^\d+$/.test(name))
  const rows: ProcessInfo[] = []
  let next = 0
  const worker = async () => {
    while (next < pids.length) {
      const row = await readProcess(pids[next++]!, tagName)
      if (row && row.state !== 'Z') rows.push(row)
    }
  }
  await Promise.all(Array.from({ length: Math.min(SCAN_CONCURRENCY, pids.length) }, worker))
  return rows
}

async function listProc(): Promise<string[]> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await readdir('/proc')
    } catch (err) {
      if (attempt >= SCAN_RETRIES) throw err
      await sleep(SCAN_RETRY_MS * 2 ** attempt)
    }
  }
}

async function readProcess(pid: string, tagName: string): Promise<ProcessInfo | undefined> {
  let row: ProcessInfo | undefined
  try {
    row = parseStat(await readFile(`/proc/${pid}/stat`, 'utf8'))
  } catch {
    return undefined // it ended while we looked
  }
  if (!row) return undefined
  try {
    const tag = environValue(await readFile(`/proc/${pid}/environ`), tagName)
    if (tag !== undefined) row.tag = tag
  } catch {
    // ended, or not ours to read
  }
  return row
}
