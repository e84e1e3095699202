import { mkdtemp } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
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
})
