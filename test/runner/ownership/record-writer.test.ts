import pino from 'pino'
import { describe, expect, it } from 'vitest'
import { RecordWriter } from '../../../runner/ownership/record-writer.ts'
import { newRecord } from '../../../runner/ownership/record.ts'
import { MemoryRegistry } from '../../../state/mod.ts'

const log = pino({ level: 'silent' })

async function writerOf(registry: MemoryRegistry) {
  const record = { ...newRecord('s1', 'cli-1'), owner: 'r0' }
  const taken: string[] = []
  const writer = new RecordWriter(
    { value: record, revision: await registry.create(record) },
    { registry, runnerId: 'r0', log, onTakenOver: () => taken.push('taken') },
  )
  return { writer, taken }
}

describe('record writer', () => {
  it('record writer - writes run in the order they were asked for, each on the revision before it', async () => {
    const registry = new MemoryRegistry()
    const { writer } = await writerOf(registry)
    writer.write((record) => (record.state = 'busy'))
    writer.write((record) => (record.turn_id = 't1'))
    writer.write((record) => (record.stats.turns = 1))
    await writer.settled
    expect((await registry.get('s1'))!.value).toMatchObject({ state: 'busy', turn_id: 't1', stats: { turns: 1 } })
    expect(writer.value).toMatchObject({ state: 'busy', turn_id: 't1' })
  })

  it("record writer - a record changed under it but still this runner's: the change goes on the newer revision", async () => {
    const registry = new MemoryRegistry()
    const { writer, taken } = await writerOf(registry)
    const current = (await registry.get('s1'))!
    await registry.update({ ...current.value, work_dir: '/w' }, current.revision)
    writer.write((record) => (record.state = 'busy'))
    await writer.settled
    expect((await registry.get('s1'))!.value).toMatchObject({ owner: 'r0', state: 'busy', work_dir: '/w' })
    expect(taken).toEqual([])
  })

  it('record writer - another owner in the record: it is told once, and writes nothing more', async () => {
    const registry = new MemoryRegistry()
    const { writer, taken } = await writerOf(registry)
    const current = (await registry.get('s1'))!
    await registry.update({ ...current.value, owner: 'r1' }, current.revision)
    writer.write((record) => (record.state = 'busy'))
    await writer.settled
    expect(taken).toEqual(['taken'])
    expect((await registry.get('s1'))!.value).toMatchObject({ owner: 'r1', state: 'idle' })
  })

  it('record writer - stopped: later writes are skipped', async () => {
    const registry = new MemoryRegistry()
    const { writer } = await writerOf(registry)
    writer.stop()
    writer.write((record) => (record.state = 'busy'))
    await writer.settled
    expect((await registry.get('s1'))!.value.state).toBe('idle')
  })
})
