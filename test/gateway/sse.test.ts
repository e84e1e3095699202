import { describe, expect, it } from 'vitest'
import { sseFrame } from '../../gateway/sse.ts'

describe('sse - frames as OpenCode writes them', () => {
  it.each([
    { data: { type: 'server.connected', properties: {} }, frame: 'data: {"type":"server.connected","properties":{}}\n\n' },
    // A newline in a value stays escaped inside the JSON: a frame is always one data line.
    { data: { text: 'a\nb\r\n' }, frame: 'data: {"text":"a\\nb\\r\\n"}\n\n' },
    { data: 'plain', frame: 'data: "plain"\n\n' },
  ])('$frame', ({ data, frame }) => {
    expect(sseFrame(data)).toBe(frame)
    expect(
      sseFrame(data)
        .split('\n')
        .filter((line) => line !== ''),
    ).toHaveLength(1)
  })
})
