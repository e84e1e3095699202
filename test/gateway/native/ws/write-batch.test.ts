import { describe, expect, it } from 'vitest'
import { WriteBatch } from '../../../../gateway/native/ws/write-batch.ts'

function transport() {
  const calls: string[] = []
  return { calls, cork: () => calls.push('cork'), uncork: () => calls.push('uncork') }
}

describe('WriteBatch', () => {
  it('write batch - the frames of one pass go out in one write: corked at the first, uncorked once after the running code', async () => {
    const socket = transport()
    const batch = new WriteBatch(socket)
    for (let i = 0; i < 3; i++) batch.hold()
    expect(socket.calls).toEqual(['cork'])
    await new Promise((resolve) => process.nextTick(resolve))
    expect(socket.calls).toEqual(['cork', 'uncork'])
  })

  it('write batch - the next pass corks again', async () => {
    const socket = transport()
    const batch = new WriteBatch(socket)
    batch.hold()
    await new Promise((resolve) => setImmediate(resolve))
    batch.hold()
    await new Promise((resolve) => setImmediate(resolve))
    expect(socket.calls).toEqual(['cork', 'uncork', 'cork', 'uncork'])
  })
})
