import { describe, expect, it } from 'vitest'
import { isConversationInUse, NOISE_MAX_CHARS, parseClaudeLine } from '../../../../runner/engine/claude/parse.ts'
import type { EngineOutput } from '../../../../runner/engine/engine.ts'
import { RECORDED_KINDS, recording, recordingNames } from '../../../fixtures/claude-code/recordings.ts'

/** The nth line (0-based) of a recording whose `type` (and subtype) match. */
function lineOf(name: string, type: string, nth = 0): string {
  const found = recording(name).filter((l) => (JSON.parse(l) as { type: string }).type === type)
  const line = found[nth]
  if (line === undefined) throw new Error(`no ${type} line #${nth} in ${name}`)
  return line
}

const kinds = (lines: string[]) => lines.flatMap((line) => parseClaudeLine(line)).map((o) => o.kind)

describe('parseClaudeLine', () => {
  it('parse - every recorded file is covered', () => {
    expect(recordingNames()).toEqual(Object.keys(RECORDED_KINDS).sort())
  })

  it.each(Object.entries(RECORDED_KINDS))('parse - %s gives the recorded sequence of kinds', (name, expected) => {
    expect(kinds(recording(name))).toEqual(expected)
  })

  it('parse - the tool turn of sample-stream.jsonl in full', () => {
    const out = recording('sample-stream.jsonl').flatMap((line) => parseClaudeLine(line))
    expect(out).toEqual([
      { kind: 'init', cliSessionId: '4dc2f377-1d19-4b21-94bf-5914df2af46b', model: 'claude-opus-5-5', version: '2.1.330' },
      { kind: 'thinking', text: 'The user wants me to run a command. I will use Bash.', messageId: 'msg_fake_1795288263110_2' },
      { kind: 'text', text: 'Let me run a command.', messageId: 'msg_fake_1795288263110_2' },
      { kind: 'tool_use', id: 'toolu_fake_1', name: 'Bash', input: { command: 'echo hi', description: 'Print hi' }, messageId: 'msg_fake_1795288263110_2' },
      { kind: 'tool_result', toolUseId: 'toolu_fake_1', content: 'hi', isError: false },
      { kind: 'text', text: 'Done. The tool said: "hi"', messageId: 'msg_fake_1795288263393_3' },
      {
        kind: 'result',
        result: {
          isError: false,
          subtype: 'success',
          text: 'Done. The tool said: "hi"',
          durationMs: 554,
          durationApiMs: 159,
          numTurns: 2,
          cumulativeCostUsd: 0.0017759999999999998,
          inputTokens: 24,
          outputTokens: 84,
          cacheReadInputTokens: 0,
          cacheCreationInputTokens: 0,
          model: 'claude-opus-5-5',
        },
      },
    ] satisfies EngineOutput[])
  })

  it.each([
    {
      name: '2.1.110 init',
      line: lineOf('sample-stream-2.1.110-cli-js.jsonl', 'system'),
      out: [{ kind: 'init', cliSessionId: '278d4b9f-888d-4675-b421-b8d22a7f414b', model: 'claude-sonnet-4-6', version: '2.1.110' }],
    },
    {
      name: '2.1.197 result model with a suffix',
      line: lineOf('sample-stream-2.1.197.jsonl', 'result'),
      out: [expect.objectContaining({ result: expect.objectContaining({ model: 'claude-opus-4-8[1m]', cumulativeCostUsd: 0.0022199999999999998 }) })],
    },
    {
      name: 'resume: cost is cumulative across processes',
      line: lineOf('sample-resume-two-runs.jsonl', 'result', 1),
      out: [expect.objectContaining({ result: expect.objectContaining({ cumulativeCostUsd: 0.0017759999999999998, numTurns: 1 }) })],
    },
    { name: 'control_response', line: lineOf('sample-stdin-interrupt.jsonl', 'control_response'), out: [] },
    { name: 'interrupt marker user line', line: lineOf('sample-stdin-interrupt.jsonl', 'user'), out: [] },
    { name: 'stream_event message_start', line: lineOf('sample-stream-partial-messages.jsonl', 'stream_event'), out: [] },
    { name: 'stream_event content_block_start', line: lineOf('sample-stream-partial-messages.jsonl', 'stream_event', 1), out: [] },
    {
      name: 'stream_event thinking_delta',
      line: lineOf('sample-stream-partial-messages.jsonl', 'stream_event', 2),
      out: [{ kind: 'thinking_delta', text: 'The user wants me to run a command. I will use Bash.', messageId: 'msg_fake_1795288283845_2' }],
    },
    { name: 'stream_event signature_delta', line: lineOf('sample-stream-partial-messages.jsonl', 'stream_event', 3), out: [] },
    {
      name: 'stream_event text_delta',
      line: lineOf('sample-stream-partial-messages.jsonl', 'stream_event', 6),
      out: [{ kind: 'text_delta', text: 'Let me run', messageId: 'msg_fake_1795288283845_2' }],
    },
    { name: 'stream_event input_json_delta', line: lineOf('sample-stream-partial-messages.jsonl', 'stream_event', 10), out: [] },
    { name: 'stream_event message_stop', line: lineOf('sample-stream-partial-messages.jsonl', 'stream_event', 14), out: [] },
    { name: 'system/status', line: '{"type":"system","subtype":"status","status":"requesting","session_id":"s"}', out: [] },
    { name: 'system/api_retry', line: lineOf('sample-api-error-500.jsonl', 'system', 0).replace('"init"', '"x"'), out: [] },
    { name: 'rate limit event', line: '{"type":"rate_limit_event","rate_limit_info":{"status":"allowed"}}', out: [] },
  ])('parse - real line: $name', ({ line, out }) => {
    expect(parseClaudeLine(line)).toEqual(out)
  })

  it.each([
    [
      'a text delta without api_message_id (older CLIs)',
      '{"type":"stream_event","event":{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hi"}}}',
      [{ kind: 'text_delta', text: 'Hi' }],
    ],
    ['an empty text delta', '{"type":"stream_event","event":{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":""}}}', []],
    [
      'a delta whose text is not a string',
      '{"type":"stream_event","event":{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":3}}}',
      [],
    ],
    ['a delta with no delta object', '{"type":"stream_event","event":{"type":"content_block_delta","index":0}}', []],
    ['a stream_event with no event', '{"type":"stream_event"}', []],
    ['an unknown delta type', '{"type":"stream_event","event":{"type":"content_block_delta","index":0,"delta":{"type":"citations_delta"}}}', []],
  ])('parse - stream_event: %s', (_name, line, out) => {
    expect(parseClaudeLine(line)).toEqual(out)
  })

  it('parse - the partial-messages recording: the deltas of each block concatenate to its whole text', () => {
    const out = recording('sample-stream-partial-messages.jsonl').flatMap((line) => parseClaudeLine(line))
    const blocks = out.filter((o) => o.kind === 'text' || o.kind === 'thinking')
    const pieces: string[] = []
    let texts = 0
    for (const item of out) {
      if (item.kind === 'text_delta' || item.kind === 'thinking_delta') pieces.push(item.text)
      else if (item.kind === 'text' || item.kind === 'thinking') {
        expect(pieces.join('')).toBe(item.text)
        pieces.length = 0
        texts++
      }
    }
    expect(texts).toBe(blocks.length)
    expect(texts).toBe(3)
  })

  it('parse - an API error message stays a text and the result keeps its status', () => {
    const lines = recording('sample-api-error-500.jsonl')
    const text = parseClaudeLine(lineOf('sample-api-error-500.jsonl', 'assistant'))
    expect(text).toEqual([{ kind: 'text', text: expect.stringMatching(/^API Error: 500 /), messageId: 'c52a54bf-60d0-4554-8763-1ba08b4ba547' }])
    const result = parseClaudeLine(lines[lines.length - 1] ?? '')
    expect(result).toEqual([
      {
        kind: 'result',
        result: {
          isError: true,
          subtype: 'success',
          text: expect.stringMatching(/^API Error: 500 /),
          durationMs: 654,
          durationApiMs: 0,
          numTurns: 1,
          cumulativeCostUsd: 0,
          inputTokens: 0,
          outputTokens: 0,
          cacheReadInputTokens: 0,
          cacheCreationInputTokens: 0,
          apiErrorStatus: 500,
        },
      },
    ])
  })

  it('parse - an interrupted turn: error_during_execution with errors and no text', () => {
    expect(parseClaudeLine(lineOf('sample-stdin-interrupt.jsonl', 'result'))).toEqual([
      {
        kind: 'result',
        result: {
          isError: true,
          subtype: 'error_during_execution',
          text: '',
          durationMs: 1101,
          durationApiMs: 0,
          numTurns: 2,
          cumulativeCostUsd: 0,
          inputTokens: 0,
          outputTokens: 0,
          cacheReadInputTokens: 0,
          cacheCreationInputTokens: 0,
          errors: ['[ede_diagnostic] result_type=user last_content_type=n/a stop_reason=null'],
        },
      },
    ])
  })

  const user = (content: unknown) => JSON.stringify({ type: 'user', message: { role: 'user', content } })
  const assistant = (content: unknown, id: unknown = 'm1') => JSON.stringify({ type: 'assistant', message: { id, content } })

  it.each([
    {
      name: 'tool_result content as blocks',
      line: user([
        {
          type: 'tool_result',
          tool_use_id: 't',
          content: [
            { type: 'text', text: 'a' },
            { type: 'image', source: {} },
            { type: 'text', text: 'b' },
          ],
          is_error: true,
        },
      ]),
      out: [{ kind: 'tool_result', toolUseId: 't', content: 'a\nb', isError: true }],
    },
    {
      name: 'tool_result without content or is_error',
      line: user([{ type: 'tool_result', tool_use_id: 't' }]),
      out: [{ kind: 'tool_result', toolUseId: 't', content: '', isError: false }],
    },
    {
      name: 'tool_result with is_error not a boolean',
      line: user([{ type: 'tool_result', tool_use_id: 't', content: 'x', is_error: 'yes' }]),
      out: [{ kind: 'tool_result', toolUseId: 't', content: 'x', isError: false }],
    },
    {
      name: 'two tool_results in one line',
      line: user([
        { type: 'tool_result', tool_use_id: 'a', content: '1' },
        { type: 'tool_result', tool_use_id: 'b', content: '2' },
      ]),
      out: [
        { kind: 'tool_result', toolUseId: 'a', content: '1', isError: false },
        { kind: 'tool_result', toolUseId: 'b', content: '2', isError: false },
      ],
    },
    { name: 'user prompt echo (string content)', line: user('hello'), out: [] },
    {
      name: 'several blocks in one assistant line',
      line: assistant([
        { type: 'thinking', thinking: 'hm' },
        { type: 'text', text: 'hi' },
        { type: 'redacted_thinking', data: 'x' },
        { type: 'tool_use', id: 'u', name: 'Read', input: { p: 1 } },
      ]),
      out: [
        { kind: 'thinking', text: 'hm', messageId: 'm1' },
        { kind: 'text', text: 'hi', messageId: 'm1' },
        { kind: 'tool_use', id: 'u', name: 'Read', input: { p: 1 }, messageId: 'm1' },
      ],
    },
    { name: 'assistant without message id', line: assistant([{ type: 'text', text: 'hi' }], 42), out: [{ kind: 'text', text: 'hi' }] },
    { name: 'assistant with string content', line: assistant('hi'), out: [{ kind: 'text', text: 'hi', messageId: 'm1' }] },
    {
      name: 'assistant blocks with wrong types',
      line: assistant([null, 3, 'x', [], { type: 'text', text: 5 }, { type: 'tool_use' }]),
      out: [
        { kind: 'text', text: '', messageId: 'm1' },
        { kind: 'tool_use', id: '', name: '', input: {}, messageId: 'm1' },
      ],
    },
    { name: 'assistant without message', line: '{"type":"assistant"}', out: [] },
    { name: 'init with wrong field types', line: '{"type":"system","subtype":"init","session_id":1,"model":null}', out: [{ kind: 'init' }] },
    {
      name: 'result with wrong field types',
      line: '{"type":"result","is_error":"true","subtype":7,"result":{},"duration_ms":"9","total_cost_usd":null,"usage":[],"modelUsage":"x","api_error_status":"500","errors":[1,"e"]}',
      out: [
        {
          kind: 'result',
          result: {
            isError: false,
            subtype: '',
            text: '',
            durationMs: 0,
            durationApiMs: 0,
            numTurns: 0,
            cumulativeCostUsd: 0,
            inputTokens: 0,
            outputTokens: 0,
            cacheReadInputTokens: 0,
            cacheCreationInputTokens: 0,
            errors: ['1', 'e'],
          },
        },
      ],
    },
    { name: 'empty line', line: '', out: [] },
    { name: 'blank line', line: '  \t', out: [] },
    { name: 'CR left on the line', line: '{"type":"system","subtype":"init","session_id":"s"}\r', out: [{ kind: 'init', cliSessionId: 's' }] },
  ])('parse - shape: $name', ({ line, out }) => {
    expect(parseClaudeLine(line)).toEqual(out)
  })

  it.each([
    { name: 'plain text', line: 'Warning: something odd' },
    { name: 'truncated JSON', line: '{"type":"assistant","message":{' },
    { name: 'JSON array', line: '[1,2]' },
    { name: 'JSON string', line: '"text"' },
    { name: 'JSON number', line: '42' },
    { name: 'JSON null', line: 'null' },
    { name: 'object without type', line: '{"message":"x"}' },
    { name: 'object with non-string type', line: '{"type":5}' },
  ])('parse - noise: $name', ({ line }) => {
    expect(parseClaudeLine(line)).toEqual([{ kind: 'noise', line }])
  })

  it('parse - noise is truncated', () => {
    const out = parseClaudeLine('x'.repeat(10_000))
    expect(out).toHaveLength(1)
    const [item] = out
    expect(item?.kind).toBe('noise')
    if (item?.kind === 'noise') expect(item.line.length).toBeLessThanOrEqual(NOISE_MAX_CHARS + 1)
  })

  it('parse - noise is not cut inside a surrogate pair', () => {
    const [item] = parseClaudeLine('a'.repeat(NOISE_MAX_CHARS - 1) + '😀'.repeat(10))
    expect(item).toEqual({ kind: 'noise', line: 'a'.repeat(NOISE_MAX_CHARS - 1) + '…' })
  })

  it('parse - a 10 MB text line', () => {
    const text = 'y'.repeat(10 * 1024 * 1024)
    expect(parseClaudeLine(assistant([{ type: 'text', text }]))).toEqual([{ kind: 'text', text, messageId: 'm1' }])
  })

  it('parse - a 10 MB non-JSON line is noise, cut short', () => {
    const [item] = parseClaudeLine('{' + 'z'.repeat(10 * 1024 * 1024))
    expect(item?.kind).toBe('noise')
    if (item?.kind === 'noise') expect(item.line.length).toBeLessThanOrEqual(NOISE_MAX_CHARS + 1)
  })

  it('parse - deep nesting never throws', () => {
    const depth = 200_000
    const arrays = '['.repeat(depth) + ']'.repeat(depth)
    const objects = '{"a":'.repeat(depth) + '1' + '}'.repeat(depth)
    const inInput = JSON.stringify({ type: 'assistant', message: { id: 'm', content: [{ type: 'tool_use', id: 'u', name: 'n', input: 0 }] } }).replace(
      '"input":0',
      `"input":${'['.repeat(5000)}${']'.repeat(5000)}`,
    )
    for (const line of [arrays, objects, '{"type":' + arrays + '}', inInput]) {
      let out: unknown
      expect(() => (out = parseClaudeLine(line))).not.toThrow()
      expect(Array.isArray(out)).toBe(true)
    }
  })

  it('parse - never throws on odd values', () => {
    const odd: unknown[] = [
      undefined,
      null,
      42,
      {},
      '\u0000',
      '{"type":"result","usage":{"input_tokens":1e999}}',
      '{"__proto__":{"type":"result"}}',
      '{"type":"user","message":{"content":[{"type":"tool_result","content":[null,{"type":"text"}]}]}}',
    ]
    for (const line of odd) {
      expect(() => parseClaudeLine(line as string)).not.toThrow()
    }
    expect(parseClaudeLine('{"type":"result","usage":{"input_tokens":1e999}}')[0]).toMatchObject({ result: { inputTokens: 0 } })
  })

  const result = (fields: Record<string, unknown>) => JSON.stringify({ type: 'result', ...fields })
  it.each([
    {
      name: 'resumed without a transcript (errors)',
      line: result({ is_error: true, subtype: 'error_during_execution', errors: ['No conversation found with session ID: 1234'] }),
      notFound: true,
    },
    {
      name: 'resumed without a transcript (text)',
      line: result({ is_error: true, subtype: 'success', result: 'No conversation found with session ID: 1234' }),
      notFound: true,
    },
    {
      name: 'the same words in a turn that succeeded',
      line: result({ is_error: false, subtype: 'success', result: 'No conversation found, said the user' }),
      notFound: false,
    },
    { name: 'another failure', line: result({ is_error: true, subtype: 'error_max_turns', errors: ['max turns'] }), notFound: false },
  ])('parse - a failed result says whether the CLI had no conversation to resume: $name', ({ line, notFound }) => {
    const [out] = parseClaudeLine(line)
    expect(out?.kind === 'result' && out.result.conversationNotFound === true).toBe(notFound)
  })

  it.each([
    ['Error: Session ID 0b0e0c5e-1111-5222-8333-444455556666 is already in use.', true],
    ['Session ID x is ALREADY IN USE', true],
    ['Error: something else', false],
  ] as const)('parse - the stderr line %j says the conversation id is taken: %s', (line, inUse) => {
    expect(isConversationInUse(line)).toBe(inUse)
  })
})
