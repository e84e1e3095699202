import { describe, expect, it } from 'vitest'
import type { EngineOutput, TurnResult } from '../../../runner/engine/engine.ts'
import { outputEvent } from '../../../runner/session/output-events.ts'

const result: TurnResult = {
  isError: false,
  subtype: 'success',
  text: 'done',
  durationMs: 1,
  durationApiMs: 1,
  numTurns: 1,
  cumulativeCostUsd: 0,
  inputTokens: 0,
  outputTokens: 0,
  cacheReadInputTokens: 0,
  cacheCreationInputTokens: 0,
}
const toolNames = new Map([['tu1', 'Bash']])

describe('output to events', () => {
  it.each<[string, EngineOutput, unknown]>([
    ['thinking', { kind: 'thinking', text: 'hm', messageId: 'm1' }, { event: 'thinking', data: 'hm', message_id: 'm1' }],
    ['thinking without a message id', { kind: 'thinking', text: 'hm' }, { event: 'thinking', data: 'hm' }],
    ['text is an answer', { kind: 'text', text: 'hi', messageId: 'm1' }, { event: 'answer', data: 'hi', message_id: 'm1' }],
    ['text with an empty message id', { kind: 'text', text: 'hi', messageId: '' }, { event: 'answer', data: 'hi' }],
    ['a thinking delta', { kind: 'thinking_delta', text: 'h', messageId: 'm1' }, { event: 'thinking_delta', data: 'h', message_id: 'm1' }],
    ['a text delta is an answer delta', { kind: 'text_delta', text: 'Hel', messageId: 'm1' }, { event: 'answer_delta', data: 'Hel', message_id: 'm1' }],
    ['a text delta without a message id', { kind: 'text_delta', text: 'lo' }, { event: 'answer_delta', data: 'lo' }],
    [
      'tool use',
      { kind: 'tool_use', id: 'tu2', name: 'Read', input: { path: 'a' }, messageId: 'm2' },
      { event: 'tool_use', data: 'Read', tool: { id: 'tu2', name: 'Read', input: { path: 'a' } }, message_id: 'm2' },
    ],
    [
      'tool result of a known call: named',
      { kind: 'tool_result', toolUseId: 'tu1', content: 'ok', isError: false },
      { event: 'tool_result', data: 'ok', tool: { id: 'tu1', name: 'Bash' }, is_error: false },
    ],
    [
      'tool result of an unknown call: id only',
      { kind: 'tool_result', toolUseId: 'tu9', content: 'no', isError: true },
      { event: 'tool_result', data: 'no', tool: { id: 'tu9' }, is_error: true },
    ],
    ['result: none (the session ends the turn)', { kind: 'result', result }, undefined],
    ['init: none', { kind: 'init', model: 'm' }, undefined],
    ['noise: none', { kind: 'noise', line: 'garbage' }, undefined],
  ])('output - %s', (_name, output, event) => {
    expect(outputEvent(output, toolNames)).toEqual(event)
  })
})
