import { readdir, readFile } from 'node:fs/promises'

/** One row of the process table. */
export interface ProcessInfo {
  pid: number
  ppid: number
  pgid: number
  /** `R`, `S`, `Z` (zombie), … */
  state: string
}

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
  return { pid, ppid, pgid, state }
}

/** Every live (non-zombie) process this user can see. */
export async function listProcesses(): Promise<ProcessInfo[]> {
  const names = await readdir('/proc')
  const rows = await Promise.all(
    names
      .filter((name) => /^\d+$/.test(name))
      .map(async (name) => {
        try {
          return parseStat(await readFile(`/proc/${name}/stat`, 'utf8'))
        } catch {
          return undefined // it ended while we looked
        }
      }),
  )
  return rows.filter((row): row is ProcessInfo => row !== undefined && row.state !== 'Z')
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

/** Pids whose environment holds `name=value` (processes that left the tree keep their environment). */
export async function taggedProcesses(rows: readonly ProcessInfo[], name: string, value: string): Promise<Set<number>> {
  const needle = Buffer.from(`\0${name}=${value}\0`)
  const found = new Set<number>()
  await Promise.all(
    rows.map(async ({ pid }) => {
      try {
        const environ = await readFile(`/proc/${pid}/environ`)
        // Prefix a NUL so the first variable matches the same needle as the others.
        if (Buffer.concat([Buffer.of(0), environ]).includes(needle)) found.add(pid)
      } catch {
        // ended, or not ours to read
      }
    }),
  )
  return found
}

/** The session's live processes: the leader's tree plus anything carrying its tag. */
export async function sessionProcesses(leaderPid: number | undefined, tagName: string, tag: string): Promise<ProcessInfo[]> {
  const rows = await listProcesses()
  const pids = await taggedProcesses(rows, tagName, tag)
  if (leaderPid !== undefined) for (const pid of descendants(rows, leaderPid)) pids.add(pid)
  pids.delete(process.pid)
  return rows.filter((row) => pids.has(row.pid))
}
