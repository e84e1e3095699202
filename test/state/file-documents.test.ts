import { appendFile, mkdtemp, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { FileDocuments } from '../../state/mod.ts'

describe('file documents - a JSON-lines bucket that outlives the process', () => {
  let dir: string | undefined
  afterEach(async () => {
    if (dir) await rm(dir, { recursive: true, force: true })
    dir = undefined
  })

  it('file documents - insert is create-only; what was written is there after reopening, deletions too', async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'ar-docs-'))
    const file = path.join(dir, 'sub', '.tenants.jsonl')
    const docs = await FileDocuments.open<{ tenant: string }>(file)
    expect(await docs.insert('s1', { tenant: 'acme' })).toEqual({ doc: { tenant: 'acme' }, created: true })
    expect(await docs.insert('s1', { tenant: 'globex' })).toEqual({ doc: { tenant: 'acme' }, created: false })
    await docs.insert('s 2/é', { tenant: 'globex' })
    await docs.insert('s3', { tenant: 'acme' })
    expect(await docs.delete('s3')).toBe(true)
    // A crash mid-write leaves a torn last line: skipped.
    await appendFile(file, '{"id":"s4","doc":{"ten')
    const reopened = await FileDocuments.open<{ tenant: string }>(file)
    expect(await reopened.get('s1')).toEqual({ tenant: 'acme' })
    expect(await reopened.get('s 2/é')).toEqual({ tenant: 'globex' })
    expect(await reopened.get('s3')).toBeUndefined()
    expect(await reopened.get('s4')).toBeUndefined()
    expect((await reopened.list()).length).toBe(2)
  })
})
