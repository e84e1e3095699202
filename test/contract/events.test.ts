import { describe, expect, it } from 'vitest'
import { isTurnEnd, parseEvent, ServiceEventSchema, type ServiceEvent } from '../../contract/mod.ts'

const stats = {
  input_tokens: 0,
  output_tokens: 0,
  cache_read_input_tokens: 0,
  cache_creation_input_tokens: 0,
  total_cost_usd: 0,
  duration_ms: 0,
  duration_api_ms: 0,
  num_turns: 0,
  turns: 0,
  tool_calls: 0,
  errors: 0,
}
const waf = {
  rule_id: 'fs.rm-root',
  category: 'filesystem_destruction',
  level: 'block',
  description: 'd',
  excerpt: 'rm -rf /',
  target: 'command',
  field: 'command',
} as const

describe('contract events - turn ends', () => {
  it.each<[string, ServiceEvent, boolean]>([
    ['completed', { event: 'completed', stats, turn_stats: stats }, true],
    ['stopped', { event: 'stopped' }, true],
    ['an error', { event: 'error', data: 'x', error: { code: 'ENGINE_ERROR', message: 'x' } }, true],
    ['a blocked prompt', { event: 'error', data: 'x', error: { code: 'WAF_BLOCKED', message: 'x' }, waf }, true],
    [
      'a denied tool call',
      { event: 'error', data: 'x', error: { code: 'WAF_BLOCKED', message: 'x' }, waf, tool: { id: 't1', name: 'Bash', input: { command: 'rm -rf /' } } },
      false,
    ],
    ['a tool_use', { event: 'tool_use', data: 'Bash', tool: { id: 't1', name: 'Bash', input: {} } }, false],
    ['an answer', { event: 'answer', data: 'hi' }, false],
  ])('isTurnEnd - %s: %s', (_name, event, ends) => {
    expect(isTurnEnd(event)).toBe(ends)
  })

  it('error event - the WAF payload round-trips the wire schema; a bad level is refused', () => {
    const event = { event: 'error', session_id: 's', seq: 3, ts: 1, data: 'x', error: { code: 'WAF_BLOCKED', message: 'x' }, waf, tool: { name: 'Bash' } }
    expect(parseEvent(JSON.stringify(event))).toEqual(event)
    expect(() => parseEvent(JSON.stringify({ ...event, waf: { ...waf, level: 'maybe' } }))).toThrow()
  })
})

describe('contract events - parseEvent takes exactly what the schema takes', () => {
  const answer = { event: 'answer', data: 'hi', message_id: 'm', session_id: 's', seq: 4, ts: 1.5, turn_id: 't', request_id: 7, truncated: false }
  it.each<[string, unknown]>([
    ['a full answer', answer],
    ['a bare thinking', { event: 'thinking', data: '' }],
    ['a delta without seq', { event: 'answer_delta', data: 'x', session_id: 's' }],
    ['a string request_id', { ...answer, request_id: 'r' }],
    ['a request_id of 200 characters', { ...answer, request_id: 'r'.repeat(200) }],
    ['one of 201', { ...answer, request_id: 'r'.repeat(201) }],
    ['a key the schema strips', { ...answer, extra: 1 }],
    ['a __proto__ key', JSON.parse('{"event":"answer","data":"x","__proto__":{"seq":1}}')],
    ['seq 0', { ...answer, seq: 0 }],
    ['a fractional seq', { ...answer, seq: 1.5 }],
    ['an unsafe seq', { ...answer, seq: 2 ** 53 }],
    ['a numeric data', { ...answer, data: 1 }],
    ['no data', { event: 'answer' }],
    ['a null message_id', { ...answer, message_id: null }],
    ['a string ts', { ...answer, ts: '1' }],
    ['a string truncated', { ...answer, truncated: 'yes' }],
    ['a numeric turn_id', { ...answer, turn_id: 1 }],
    ['an unknown event', { event: 'answered', data: 'x' }],
    ['a tool_use', { event: 'tool_use', data: 'Bash', tool: { id: 't', name: 'Bash', input: {} }, seq: 2 }],
    ['an array', [answer]],
    ['null', null],
  ])('%s', (_name, raw) => {
    const json = JSON.stringify(raw)
    let expected: unknown
    try {
      expected = ServiceEventSchema.parse(JSON.parse(json))
    } catch {
      expect(() => parseEvent(json)).toThrow()
      return
    }
    expect(parseEvent(json)).toStrictEqual(expected)
  })
})
