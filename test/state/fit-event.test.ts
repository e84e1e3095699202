import { describe, expect, it } from 'vitest'
import { parseEvent, type ServiceEvent } from '../../contract/mod.ts'
import { fitEvent } from '../../state/fit-event.ts'

const LIMIT = 64 * 1024
const base = { session_id: 's', seq: 3, ts: 1 }

describe('fitEvent', () => {
  it.each([
    ['a small event is unchanged', { ...base, event: 'answer', data: 'hi' }, false],
    ['a huge answer is cut', { ...base, event: 'answer', data: 'x'.repeat(200_000) }, true],
    ['a huge answer of escaped characters is cut', { ...base, event: 'answer', data: '"\n'.repeat(100_000) }, true],
    ['multi-byte text is cut', { ...base, event: 'tool_result', data: 'é🙂'.repeat(50_000), tool: { id: 't', name: 'Read' }, is_error: false }, true],
    [
      'a huge tool input is replaced by a note',
      { ...base, event: 'tool_use', data: 'Write', tool: { id: 't', name: 'Write', input: { content: 'y'.repeat(200_000) } } },
      true,
    ],
  ] as [string, ServiceEvent, boolean][])('fit - %s', (_name, event, cut) => {
    const json = fitEvent(event, LIMIT)
    expect(Buffer.byteLength(json)).toBeLessThanOrEqual(LIMIT)
    const fitted = parseEvent(json)
    expect(fitted.seq).toBe(3)
    expect(fitted.truncated === true).toBe(cut)
    if (!cut) expect(fitted).toEqual(event)
    if (cut && 'data' in fitted && typeof event === 'object' && 'data' in event && event.data!.length > LIMIT) {
      expect(String(fitted.data).endsWith('[truncated: the event was larger than the bus allows]')).toBe(true)
    }
  })
})
