import { describe, expect, it } from 'vitest'
import { emptyStats, type ServiceEvent } from '../../../../contract/mod.ts'
import { fromHotplexFrame, summarizeInput, toHotplex } from '../../../../gateway/native/ws/hotplex.ts'

const stats = {
  ...emptyStats(),
  input_tokens: 10,
  output_tokens: 5,
  cache_read_input_tokens: 3,
  cache_creation_input_tokens: 2,
  duration_ms: 1200,
  tool_calls: 2,
  turns: 1,
  total_cost_usd: 0.01,
  model: 'm-1',
}
const base = { session_id: 's-1', seq: 4, request_id: 7 }

describe('hotplex - toHotplex', () => {
  const cases: { name: string; event: ServiceEvent; data: unknown; meta?: unknown }[] = [
    {
      name: 'thinking',
      event: { event: 'thinking', data: 'hmm', ...base },
      data: { event_type: 'thinking', event_data: 'hmm', meta: { status: 'running' } },
      meta: { status: 'running' },
    },
    { name: 'answer', event: { event: 'answer', data: 'hi', ...base }, data: { event_type: 'answer', event_data: 'hi', meta: {} } },
    {
      name: 'tool_use',
      event: { event: 'tool_use', data: 'Bash', tool: { id: 't1', name: 'Bash', input: { command: 'ls -la' } }, ...base },
      data: { event_type: 'tool_use', event_data: 'Bash', meta: { tool_name: 'Bash', tool_id: 't1', status: 'running', input_summary: 'ls -la' } },
    },
    {
      name: 'tool_result that failed',
      event: { event: 'tool_result', data: 'boom', tool: { id: 't1', name: 'Bash' }, is_error: true, ...base },
      data: { event_type: 'tool_result', event_data: 'boom', meta: { tool_name: 'Bash', tool_id: 't1', status: 'error', output_summary: 'boom' } },
    },
    {
      name: 'session_stats',
      event: { event: 'session_stats', stats, turn_stats: stats, tools_used: ['Bash', 'Read'], is_error: false, ...base },
      data: {
        session_id: 's-1',
        total_duration_ms: 1200,
        input_tokens: 10,
        output_tokens: 5,
        cache_write_tokens: 2,
        cache_read_tokens: 3,
        total_tokens: 20,
        tool_call_count: 2,
        tools_used: ['Bash', 'Read'],
        total_cost_usd: 0.01,
        model_used: 'm-1',
        is_error: false,
      },
    },
    {
      name: 'completed',
      event: { event: 'completed', stats, turn_stats: stats, data: 'done', ...base },
      data: { session_id: 's-1', stats: expect.objectContaining({ total_duration_ms: 1200, input_tokens: 10, output_tokens: 5, tool_call_count: 2 }) },
    },
    { name: 'stats', event: { event: 'stats', stats, ...base }, data: expect.objectContaining({ session_id: 's-1', total_tokens: 20, turns: 1 }) },
    {
      name: 'version',
      event: { event: 'version', data: '2.1 (Claude Code)', engine: 'claude', request_id: 7 },
      data: { version: '2.1 (Claude Code)', engine: 'claude' },
    },
    { name: 'stopped', event: { event: 'stopped', data: 'user', ...base }, data: { session_id: 's-1', reason: 'user' } },
    {
      name: 'error',
      event: { event: 'error', data: 'nope', error: { code: 'SESSION_NOT_FOUND', message: 'nope' }, ...base },
      data: { message: 'nope', code: 'SESSION_NOT_FOUND' },
    },
  ]
  it.each(cases)('$name - data in HotPlex shape, type and ids beside it', ({ event, data, meta }) => {
    const frame = toHotplex(event)!
    expect(frame.event).toBe(event.event)
    expect(frame.type).toBe(event.event)
    expect(frame.data).toEqual(data)
    if (meta !== undefined) expect(frame.meta).toEqual(meta)
    expect(frame.request_id).toBe(7)
  })

  it('error - keeps our error body beside data.message', () => {
    expect(toHotplex({ event: 'error', data: 'x', error: { code: 'BAD_REQUEST', message: 'x' } })!.error).toEqual({ code: 'BAD_REQUEST', message: 'x' })
  })

  it("error - one denied tool call is permission_denied, not an error the client would take for the turn's end", () => {
    const frame = toHotplex({
      event: 'error',
      data: 'blocked',
      error: { code: 'WAF_BLOCKED', message: 'blocked' },
      tool: { id: 't1', name: 'Bash', input: {} },
    })!
    expect(frame).toMatchObject({
      event: 'permission_denied',
      type: 'permission_denied',
      data: { event_type: 'permission_denied', event_data: 'blocked', meta: { tool_name: 'Bash', tool_id: 't1', status: 'error' } },
      error: { code: 'WAF_BLOCKED' },
    })
  })

  it.each(['answer_delta', 'thinking_delta'] as const)('%s - not sent', (name) => {
    expect(toHotplex({ event: name, data: 'x' })).toBeUndefined()
  })

  it('task_boundary - not sent', () => {
    expect(toHotplex({ event: 'task_boundary', data: 'tool running', tool: { id: 't', name: 'Bash' }, elapsed_ms: 1 })).toBeUndefined()
  })
})

describe('hotplex - summarizeInput', () => {
  it.each([
    [{ command: 'git status' }, 'git status'],
    [{ file_path: '/w/a.ts', content: 'x' }, '/w/a.ts'],
    [{ pattern: '*.ts' }, '*.ts'],
    [{}, ''],
    [undefined, ''],
    ['plain', 'plain'],
    [{ other: 1 }, '{"other":1}'],
    [{ command: 'x'.repeat(300) }, `${'x'.repeat(99)}…`],
  ])('%j - %s', (input, summary) => {
    expect(summarizeInput(input)).toBe(summary)
  })
})

describe('hotplex - fromHotplexFrame', () => {
  it.each([
    {
      name: 'system_prompt is instructions',
      raw: { type: 'execute', prompt: 'p', system_prompt: 'sp' },
      frame: { type: 'execute', prompt: 'p', instructions: 'sp' },
    },
    { name: 'system_prompt null is none', raw: { type: 'execute', prompt: 'p', system_prompt: null }, frame: { type: 'execute', prompt: 'p' } },
    {
      name: 'instructions win over system_prompt',
      raw: { type: 'execute', prompt: 'p', instructions: 'i', system_prompt: 'sp' },
      frame: { type: 'execute', prompt: 'p', instructions: 'i' },
    },
    {
      name: "the SDKs' config",
      raw: { type: 'execute', prompt: 'p', config: { session_id: 's', work_dir: 'w', task_instructions: 't' } },
      frame: { type: 'execute', prompt: 'p', session_id: 's', work_dir: 'w', instructions: 't' },
    },
    {
      name: 'a config that is not an object is left for the schema',
      raw: { type: 'execute', prompt: 'p', config: 3 },
      frame: { type: 'execute', prompt: 'p', config: 3 },
    },
    { name: 'not an object', raw: [1], frame: [1] },
    {
      name: 'an execute with an empty session_id gets a new session',
      raw: { type: 'execute', prompt: 'p', session_id: '' },
      frame: { type: 'execute', prompt: 'p' },
    },
    {
      name: 'a stop with an empty session_id is left for the schema to refuse',
      raw: { type: 'stop', session_id: '' },
      frame: { type: 'stop', session_id: '' },
    },
  ])('$name', ({ raw, frame }) => {
    expect(fromHotplexFrame(raw)).toEqual(frame)
  })
})
