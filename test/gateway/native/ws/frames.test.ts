import { describe, expect, it } from 'vitest'
import type { ServiceError } from '../../../../contract/mod.ts'
import { toQuickstart } from '../../../../gateway/native/ws/dialect.ts'
import { parseFrame } from '../../../../gateway/native/ws/frames.ts'

function codeOf(raw: unknown): string {
  try {
    parseFrame(raw)
    return 'ok'
  } catch (err) {
    return (err as ServiceError).code
  }
}

describe('websocket frames', () => {
  it.each([
    [{ type: 'execute', prompt: 'hi' }, 'ok'],
    [{ type: 'execute', prompt: 'hi', session_id: 's', request_id: 3, work_dir: 'w', instructions: 'i' }, 'ok'],
    [{ type: 'execute', prompt: 'hi', request_id: 'abc' }, 'ok'],
    [{ type: 'execute' }, 'BAD_REQUEST'],
    [{ type: 'execute', prompt: '' }, 'BAD_REQUEST'],
    [{ type: 'execute', prompt: 5 }, 'BAD_REQUEST'],
    [{ type: 'execute', prompt: 'x', session_id: '' }, 'BAD_REQUEST'],
    [{ type: 'stop', session_id: 's' }, 'ok'],
    [{ type: 'stop' }, 'BAD_REQUEST'],
    [{ type: 'stats', session_id: 's' }, 'ok'],
    [{ type: 'version' }, 'ok'],
    [{ type: 'session_start', session_id: 's', work_dir: 'w', instructions: 'i' }, 'ok'],
    [{ type: 'prompt', content: 'hello' }, 'ok'],
    [{ type: 'prompt' }, 'BAD_REQUEST'],
    [{ type: 'launch' }, 'UNKNOWN_TYPE'],
    [{ prompt: 'no type' }, 'UNKNOWN_TYPE'],
    [{ type: 'toString' }, 'UNKNOWN_TYPE'],
    [[1, 2], 'BAD_REQUEST'],
    [null, 'BAD_REQUEST'],
    ['execute', 'BAD_REQUEST'],
  ])('frame - %j → %s', (raw, expected) => {
    expect(codeOf(raw)).toBe(expected)
  })

  it('frame - the error names the missing field', () => {
    expect(() => parseFrame({ type: 'execute' })).toThrow('field "prompt" is required')
    expect(() => parseFrame({ type: 'stop' })).toThrow('field "session_id" is required')
  })

  it.each([
    [
      { event: 'answer', session_id: 's', seq: 3, data: 'hi' },
      { type: 'answer', payload: { content: 'hi', session_id: 's', seq: 3 } },
    ],
    [
      { event: 'answer_delta', session_id: 's', turn_id: 't', data: 'Hel', message_id: 'm1' },
      { type: 'answer_delta', payload: { content: 'Hel', session_id: 's', turn_id: 't', message_id: 'm1' } },
    ],
    [
      { event: 'thinking_delta', session_id: 's', data: 'hm' },
      { type: 'thinking_delta', payload: { content: 'hm', session_id: 's' } },
    ],
    [
      { event: 'stopped', session_id: 's', seq: 4 },
      { type: 'stopped', payload: { content: '', session_id: 's', seq: 4 } },
    ],
    [
      { event: 'tool_use', data: 'Bash', tool: { id: 't1', name: 'Bash', input: { command: 'ls' } } },
      { type: 'tool_use', payload: { content: 'Bash', tool: { id: 't1', name: 'Bash', input: { command: 'ls' } } } },
    ],
  ])('quick-start dialect - %j', (event, expected) => {
    expect(toQuickstart(event as never)).toEqual(expected)
  })
})
