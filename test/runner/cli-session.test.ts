import { mkdtemp, readdir, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { ServiceError } from '../../contract/mod.ts'
import { cliSessionId, MarkerStore } from '../../runner/cli-session.ts'

const UUID_V5 = /^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/

describe('cli session id', () => {
  it('cli session - is a stable UUIDv5 of namespace and session id', () => {
    const id = cliSessionId('default', 's1')
    expect(id).toMatch(UUID_V5)
    expect(cliSessionId('default', 's1')).toBe(id)
  })

  it.each([
    ['default', 's2'],
    ['other', 's1'],
    ['defaults', '1'],
  ])('cli session - %s/%s differs from default/s1', (namespace, session) => {
    expect(cliSessionId(namespace, session)).not.toBe(cliSessionId('default', 's1'))
  })

  it('marker - round trips and is absent before it is written', async () => {
    const store = new MarkerStore(await mkdtemp(path.join(os.tmpdir(), 'ar-marker-')))
    expect(await store.read('a.b/c')).toBeUndefined()
    const marker = { session_id: 'a.b/c', cli_session_id: cliSessionId('default', 'a.b/c'), work_dir: '/w', instructions: 'be brief', created_at: 'now' }
    await store.write(marker)
    expect(await store.read('a.b/c')).toEqual(marker)
  })

  it('cli session - ids that differ only where one has a lone surrogate never share a conversation', () => {
    expect(() => cliSessionId('default', 'x\ud800')).toThrow(ServiceError)
    expect(cliSessionId('default', 'x\ufffd')).toMatch(UUID_V5)
  })

  it("marker - an id with a lone surrogate is refused, never stored under another id's file", async () => {
    const store = new MarkerStore(await mkdtemp(path.join(os.tmpdir(), 'ar-marker-')))
    await store.write({ session_id: 'x\ufffd', cli_session_id: 'c', work_dir: '/w', created_at: 'now' })
    const err = (await store.read('x\ud800').catch((e: unknown) => e)) as ServiceError
    expect(err).toBeInstanceOf(ServiceError)
    expect(err.code).toBe('BAD_REQUEST')
  })

  it.each([
    ['256 safe characters', 'b'.repeat(256)],
    ['256 three-byte characters', '€'.repeat(256)],
    ['128 emoji', '\u{1F600}'.repeat(128)],
    ['an id whose name is 249 characters', 'é'.repeat(93)],
  ])('marker - an id of %s round trips', async (_, id) => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'ar-marker-'))
    const store = new MarkerStore(dir)
    const marker = { session_id: id, cli_session_id: cliSessionId('default', id), work_dir: '/w', created_at: 'now' }
    await store.write(marker)
    expect(await store.read(id)).toEqual(marker)
    expect(await store.read([...id].slice(0, -1).join('') + 'z')).toBeUndefined()
    expect(await readdir(dir)).toHaveLength(1)
  })

  it('marker - a marker that cannot be read or written fails without naming the server path', async () => {
    const root = await mkdtemp(path.join(os.tmpdir(), 'ar-marker-'))
    const dir = path.join(root, 'not-a-dir')
    await writeFile(dir, '')
    const store = new MarkerStore(dir)
    for (const attempt of [store.read('s'), store.write({ session_id: 's', cli_session_id: 'c', work_dir: '/w', created_at: 'now' })]) {
      const err = (await attempt.catch((e: unknown) => e)) as ServiceError
      expect(err).toBeInstanceOf(ServiceError)
      expect(err.code).toBe('INTERNAL')
      expect(err.message).not.toContain(root)
      expect(err.cause).toBeInstanceOf(Error)
    }
  })
})
