import { mkdir, mkdtemp, readdir, realpath, rm, symlink } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startStack, type Stack } from '../../fixtures/stack.ts'
import { WsClient } from '../../fixtures/ws-client.ts'

/**
 * `session.work_dir_roots` (runner/session/conversation.ts): a client's absolute work_dir inside
 * a root is used as it is, in the bubblewrap sandbox; outside, refused naming the roots, never the base.
 */
describe('work_dir roots', () => {
  let stack: Stack
  let root: string
  let client: WsClient

  beforeAll(async () => {
    // Under /tmp on purpose: the sandbox gives every session a private /tmp, and the work dir must still be the host's.
    root = await realpath(await mkdtemp(path.join(os.tmpdir(), 'ar-roots-')))
    stack = await startStack({ session: { work_dir_roots: [root] }, sandbox: { mode: 'bwrap', command: '/usr/bin/bwrap' } })
    client = await WsClient.connect(stack.wsUrl)
  })
  afterAll(async () => {
    await client.close()
    await stack.close()
    await rm(root, { recursive: true, force: true })
  })

  it('roots - an absolute work_dir inside a root is where the sandboxed agent runs and writes', async () => {
    const workDir = path.join(root, 'project')
    await mkdir(workDir)
    client.send({ type: 'execute', session_id: 'root-1', prompt: 'tool: pwd && touch made-by-agent', work_dir: workDir })
    await client.event('completed', 'root-1')
    expect(client.eventsOf('root-1').find((msg) => msg.event === 'tool_result')!.data).toBe(workDir)
    expect(await readdir(workDir)).toContain('made-by-agent')
    // The next turn is checked against the root again, not against the base.
    client.send({ type: 'execute', session_id: 'root-1', prompt: 'again', work_dir: workDir, request_id: 'again' })
    expect(await client.next((msg) => msg.request_id === 'again' && (msg.event === 'completed' || msg.event === 'error'))).toMatchObject({ event: 'completed' })
  })

  it('roots - outside every root: refused, the roots named, the base not', async () => {
    client.send({ type: 'execute', session_id: 'root-2', prompt: 'hi', work_dir: '/etc', request_id: 'outside' })
    const error = await client.next((msg) => msg.request_id === 'outside')
    expect(error).toMatchObject({ error: { code: 'WORK_DIR_REJECTED' } })
    expect(error.data).toContain(root)
    expect(error.data).not.toContain(stack.config.session.work_dir)
  })

  it('roots - a symlink inside a root that points out of it is refused', async () => {
    await symlink('/etc', path.join(root, 'escape'))
    client.send({ type: 'execute', session_id: 'root-3', prompt: 'hi', work_dir: path.join(root, 'escape', 'x'), request_id: 'symlink' })
    expect(await client.next((msg) => msg.request_id === 'symlink')).toMatchObject({ error: { code: 'WORK_DIR_REJECTED' } })
  })

  it('roots - a relative work_dir is still inside the base', async () => {
    client.send({ type: 'execute', session_id: 'root-4', prompt: 'tool: pwd', work_dir: 'team/x' })
    await client.event('completed', 'root-4')
    expect(client.eventsOf('root-4').find((msg) => msg.event === 'tool_result')!.data).toBe(path.join(await realpath(stack.config.session.work_dir), 'team/x'))
  })
})
