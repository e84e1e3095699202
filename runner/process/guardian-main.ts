#!/usr/bin/env node
/**
 * The guardian: started by a runner, it learns the tags of the runner's
 * session processes on stdin (`+tag` / `-tag` lines). When stdin ends — the
 * runner exited or was killed — it ends every process still carrying one of
 * those tags (SIGTERM, then SIGKILL after the grace period given as argv[2]),
 * and exits. Nothing of a session outlives its runner.
 */
import { terminateSession } from './terminate.ts'

const graceMs = Number(process.argv[2] ?? 3_000)
const tags = new Set<string>()
let buffered = ''

process.stdin.setEncoding('utf8')
process.stdin.on('data', (chunk: string) => {
  buffered += chunk
  const lines = buffered.split('\n')
  buffered = lines.pop() ?? ''
  for (const line of lines) {
    if (line.startsWith('+')) tags.add(line.slice(1))
    else if (line.startsWith('-')) tags.delete(line.slice(1))
  }
})
process.stdin.on('close', () => {
  void Promise.all([...tags].map((tag) => terminateSession(undefined, tag, graceMs))).finally(() => process.exit(0))
})
// The runner's signals are not ours: only stdin ending tells us it is gone.
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(signal, () => {})
