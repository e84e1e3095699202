import { spawn } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { SESSION_TAG_VAR } from '../../../runner/process/env.ts'
import { terminateSession } from '../../../runner/process/terminate.ts'
import { sessionProcesses } from '../../../runner/process/tree.ts'
import { until } from '../../fixtures/until.ts'

/** Starts `script` under bash in its own process group, tagged like a session's CLI; `exited` resolves when bash is gone. */
async function startTree(script: string): Promise<{ pid: number; tag: string; exited: Promise<unknown> }> {
  const tag = randomUUID()
  const child = spawn('/bin/bash', ['-c', script], { detached: true, stdio: 'ignore', env: { ...process.env, [SESSION_TAG_VAR]: tag } })
  const exited = new Promise((resolve) => child.once('exit', resolve))
  child.unref()
  // Wait until the whole tree is up (the script reports nothing, so count processes).
  await until(async () => (await sessionProcesses(child.pid, SESSION_TAG_VAR, tag)).length >= 3, 'the tree of three processes', 2_000, 20)
  return { pid: child.pid!, tag, exited }
}

async function alive(pid: number, tag: string): Promise<number[]> {
  return (await sessionProcesses(pid, SESSION_TAG_VAR, tag)).map((row) => row.pid)
}

describe('terminateSession', () => {
  it('terminate - ends a tree whose tool command runs in a process group of its own', async () => {
    // setsid puts the "tool" in a new group, as the real CLI does for Bash commands.
    const { pid, tag } = await startTree('setsid sleep 300 & sleep 300 & wait')
    expect((await alive(pid, tag)).length).toBeGreaterThanOrEqual(3)
    const result = await terminateSession(pid, tag, 2_000)
    expect(result.survivors).toEqual([])
    expect(await alive(pid, tag)).toEqual([])
  })

  it('terminate - finds processes orphaned by a killed leader through their tag', async () => {
    const { pid, tag, exited } = await startTree('setsid sleep 300 & setsid sleep 301 & wait')
    process.kill(pid, 'SIGKILL') // the leader dies without cleaning up; its children are reparented
    await exited
    expect((await alive(pid, tag)).length).toBeGreaterThanOrEqual(2)
    const result = await terminateSession(pid, tag, 2_000)
    expect(result.survivors).toEqual([])
    expect(await alive(pid, tag)).toEqual([])
  })

  it('terminate - forces processes that ignore SIGTERM after the grace period', async () => {
    const { pid, tag } = await startTree("trap '' TERM; setsid bash -c \"trap '' TERM; sleep 300 & wait\" & sleep 300 & wait")
    const result = await terminateSession(pid, tag, 300)
    expect(result.forced).toBe(true)
    expect(result.survivors).toEqual([])
    expect(await alive(pid, tag)).toEqual([])
  })

  it('terminate - nothing to do for a tag nobody carries', async () => {
    expect(await terminateSession(undefined, randomUUID(), 100)).toEqual({ survivors: [], forced: false })
  })
})
