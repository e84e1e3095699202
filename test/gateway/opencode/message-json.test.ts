import { text } from 'node:stream/consumers'
import { describe, expect, it } from 'vitest'
import { messageJson, messagesJson, PARTS_PER_SLICE } from '../../../gateway/opencode/message-json.ts'
import type { MessageWithParts, Part } from '../../../gateway/opencode/schemas/message.ts'

function message(id: string, parts: number): MessageWithParts {
  return {
    info: { id, sessionID: 's', role: 'user', time: { created: 1 }, agent: 'build', model: { providerID: 'p', modelID: 'm' } },
    parts: Array.from({ length: parts }, (_, i): Part => ({ id: `${id}_prt_${i}`, sessionID: 's', messageID: id, type: 'text', text: `part "${i}"\n` })),
  }
}

describe('opencode message json - the text JSON.stringify gives, a slice at a time', () => {
  it.each([
    { name: 'no message', messages: [] },
    { name: 'a message without parts', messages: [message('m1', 0)] },
    { name: 'two short messages', messages: [message('m1', 1), message('m2', 3)] },
    { name: 'a slice exactly', messages: [message('m1', PARTS_PER_SLICE)] },
    { name: 'a slice and one part', messages: [message('m1', PARTS_PER_SLICE + 1)] },
    { name: 'slices across messages', messages: [message('m1', PARTS_PER_SLICE - 1), message('m2', 2), message('m3', 2 * PARTS_PER_SLICE)] },
  ])('$name', async ({ messages }) => {
    expect(await text(messagesJson(messages))).toBe(JSON.stringify(messages))
    for (const one of messages) expect(await text(messageJson(one))).toBe(JSON.stringify(one))
  })

  it('fields left undefined are left out, as JSON.stringify does', async () => {
    const one = message('m1', 1)
    ;(one.parts[0] as Record<string, unknown>).time = undefined
    expect(JSON.parse(await text(messageJson(one))).parts[0]).not.toHaveProperty('time')
  })

  it('the event loop turns between slices: other work runs while a long message is serialized', async () => {
    const slices = 20
    const long = message('m1', slices * PARTS_PER_SLICE)
    let turns = 0
    let reading = true
    const tick = () => {
      turns++
      if (reading) setImmediate(tick)
    }
    setImmediate(tick)
    const json = await text(messageJson(long))
    reading = false
    expect(JSON.parse(json).parts).toHaveLength(slices * PARTS_PER_SLICE)
    expect(turns).toBeGreaterThanOrEqual(slices - 1)
  })

  it('the text is of the moment it was asked for: parts added or replaced later are not in it', async () => {
    const one = message('m1', 3 * PARTS_PER_SLICE)
    const expected = JSON.stringify(one)
    const stream = messageJson(one)
    one.parts.push(message('m2', 1).parts[0]!)
    one.parts[0] = message('m3', 1).parts[0]!
    expect(await text(stream)).toBe(expected)
  })
})
