import { describe, expect, it } from 'vitest'
import { isTurnEnd, parseEvent, type ServiceEvent } from '../../contract/mod.ts'

const stats = { input_tokens: 0, output_tokens: 0, cache_read_input_tokens: 0, cache_creation_input_tokens: 0, total_cost_usd: 0, duration_ms: 0, duration_api_ms: 0, num_turns: 0, turns: 0, tool_calls: 0, errors: 0 }
const waf = { rule_id: 'fs.rm-root', category: 'filesystem_destruction', level: 'block', description: 'd', excerpt: 'rm -rf /', target: 'command', field: 'command' } as const

describe('contract events - turn ends', () => {
  it.each<[string, ServiceEvent, boolean]>([
    ['completed', { event: 'completed', stats, turn_stats: stats }, true],
    ['stopped', { event: 'stopped' }, true],
    ['an error', { event: 'error', data: 'x', error: { code: 'ENGINE_ERROR', message: 'x' } }, true],
    ['a blocked prompt', { event: 'error', data: 'x', error: { code: 'WAF_BLOCKED', message: 'x' }, waf }, true],
    ['a denied tool call', { event: 'error', data: 'x', error: { code: 'WAF_BLOCKED', message: 'x' }, waf, tool: { id: 't1', name: 'Bash', input: { command: 'rm -rf /' } } }, false],
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
