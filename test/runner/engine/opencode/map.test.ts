import { readFileSync } from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import type { EngineOutput } from '../../../../runner/engine/engine.ts'
import { OpenCodeTurnMapper } from '../../../../runner/engine/opencode/map.ts'

const recordings = path.resolve(import.meta.dirname, '../../../fakes/recordings/opencode-1.18.33')
const reference = '/work/shared/reference/opencode'
const lines = (file: string) =>
  readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l !== '')
const kinds = (outputs: EngineOutput[]) => outputs.map((o) => o.kind)

function mapAll(file: string, announce?: { callId: string; tool: string; input: unknown }) {
  const mapper = new OpenCodeTurnMapper()
  const outputs: EngineOutput[] = []
  if (announce) outputs.push(...mapper.toolStarting(announce.callId, announce.tool, announce.input))
  for (const line of lines(file)) outputs.push(...mapper.line(line))
  return { mapper, outputs }
}

describe('opencode map - recorded `opencode run --format json --thinking` turns', () => {
  it.each([
    {
      file: `${recordings}/run-json-tool-turn.jsonl`,
      expected: ['init', 'thinking', 'text', 'tool_use', 'tool_result', 'text'],
      text: 'Done. The tool said: recorded-ok\n',
      steps: 2,
    },
    {
      file: `${recordings}/run-json-denied-turn.jsonl`,
      expected: ['init', 'thinking', 'text', 'tool_use', 'tool_result', 'text'],
      text: 'Done. The tool said: Blocked by the runtime: recorded denial',
      steps: 2,
    },
    {
      file: `${recordings}/run-json-text-turn.jsonl`,
      expected: ['init', 'text'],
      text: 'Earlier prompts: run: echo recorded-ok | run: rm -rf /tmp/nothing',
      steps: 1,
    },
    {
      file: `${reference}/opencode-run-format-json-tool-turn.jsonl`,
      expected: ['init', 'text', 'tool_use', 'tool_result', 'text'],
      text: 'The file says hello.',
      steps: 2,
    },
    { file: `${reference}/opencode-run-format-json.jsonl`, expected: ['init', 'text'], text: 'Hello from fake OpenAI', steps: 1 },
  ])('$file: outputs in order, a successful result with the steps summed', ({ file, expected, text, steps }) => {
    const { mapper, outputs } = mapAll(file)
    expect(kinds(outputs)).toEqual(expected)
    expect(outputs[0]).toMatchObject({ kind: 'init', cliSessionId: expect.stringMatching(/^ses_/) })
    const result = mapper.result({ code: 0, signal: null }, 1234, [])
    expect(result).toMatchObject({ isError: false, subtype: 'success', text, numTurns: steps, durationMs: 1234, cumulativeCostUsd: 0 })
    expect(result.inputTokens).toBeGreaterThan(0)
    expect(result.outputTokens).toBeGreaterThan(0)
  })

  it('tool parts - completed is output, error is an error result, both under the call id', () => {
    const ok = mapAll(`${recordings}/run-json-tool-turn.jsonl`).outputs
    expect(ok.find((o) => o.kind === 'tool_use')).toMatchObject({ name: 'bash', input: { command: 'echo recorded-ok' }, id: 'call_fake_1' })
    expect(ok.find((o) => o.kind === 'tool_result')).toMatchObject({ toolUseId: 'call_fake_1', content: 'recorded-ok\n', isError: false })
    const denied = mapAll(`${recordings}/run-json-denied-turn.jsonl`).outputs
    expect(denied.find((o) => o.kind === 'tool_result')).toMatchObject({ content: 'Blocked by the runtime: recorded denial', isError: true })
  })

  it('a call announced before it ran is not reported twice: the part adds only its result', () => {
    const { outputs } = mapAll(`${recordings}/run-json-tool-turn.jsonl`, { callId: 'call_fake_1', tool: 'bash', input: { command: 'echo recorded-ok' } })
    expect(kinds(outputs)).toEqual(['tool_use', 'init', 'thinking', 'text', 'tool_result', 'text'])
    const mapper = new OpenCodeTurnMapper()
    expect(mapper.toolStarting('c1', 'bash', {})).toHaveLength(1)
    expect(mapper.toolStarting('c1', 'bash', {})).toEqual([])
  })

  it('steps are summed: tokens (reasoning counted as output), cache, cost', () => {
    const mapper = new OpenCodeTurnMapper()
    const step = (input: number, output: number, reasoning: number, cost: number) =>
      JSON.stringify({
        type: 'step_finish',
        sessionID: 'ses_x',
        part: { type: 'step-finish', tokens: { input, output, reasoning, cache: { read: 2, write: 1 } }, cost },
      })
    mapper.line(step(10, 5, 3, 0.25))
    mapper.line(step(20, 7, 0, 0.5))
    expect(mapper.result({ code: 0, signal: null }, 0, [])).toMatchObject({
      inputTokens: 30,
      outputTokens: 15,
      cacheReadInputTokens: 4,
      cacheCreationInputTokens: 2,
      cumulativeCostUsd: 0.75,
      numTurns: 2,
    })
  })

  it.each([
    {
      name: 'an error line',
      line: JSON.stringify({ type: 'error', sessionID: 'ses_x', error: { name: 'APIError', data: { message: 'model down' } } }),
      exit: { code: 1, signal: null },
      stderr: [],
      errors: ['model down'],
    },
    { name: 'a killed process', line: '', exit: { code: null, signal: 'SIGKILL' }, stderr: [], errors: ['the agent CLI was ended by SIGKILL'] },
    {
      name: 'a failed exit, stderr kept',
      line: '',
      exit: { code: 1, signal: null },
      stderr: ['Error: boom'],
      errors: ['the agent CLI exited with code 1: Error: boom'],
    },
  ])('failed turn - $name', ({ line, exit, stderr, errors }) => {
    const mapper = new OpenCodeTurnMapper()
    if (line !== '') mapper.line(line)
    expect(mapper.result(exit, 0, stderr)).toMatchObject({ isError: true, subtype: 'error_during_execution', errors, text: errors.join('; ') })
  })

  it('an unknown session given to --session: conversationNotFound (stderr says so before any line)', () => {
    const mapper = new OpenCodeTurnMapper()
    expect(mapper.result({ code: 1, signal: null }, 0, ['\u001b[91m\u001b[1mError: \u001b[0mSession not found'])).toMatchObject({
      isError: true,
      conversationNotFound: true,
    })
  })

  it.each([
    { line: 'not json', out: [{ kind: 'noise', line: 'not json' }] },
    { line: '', out: [] },
    { line: '{"type":"done","reason":"idle"}', out: [{ kind: 'noise', line: '{"type":"done","reason":"idle"}' }] },
    { line: '[1,2]', out: [{ kind: 'noise', line: '[1,2]' }] },
  ])('other lines - $line', ({ line, out }) => {
    expect(new OpenCodeTurnMapper().line(line)).toEqual(out)
  })
})
