import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { responseEvents, scriptInputOf } from './openai-responses.ts'

/** Requests the real Codex CLI 0.169.0 sent (test/fakes/recordings/codex-0.169.0/, copied from ../shared/reference/codex/). */
const recorded: { body: unknown }[] = JSON.parse(readFileSync(new URL('./recordings/codex-0.169.0/responses-requests-trimmed.json', import.meta.url), 'utf8'))

describe('openai-responses fake - reading requests', () => {
  it('reads the prompt of a recorded first request, leaving out developer messages and the environment context', () => {
    expect(scriptInputOf(recorded[0]?.body)).toEqual({ prompts: ['@bash echo hi'], toolResults: [] })
  })

  it('reads the function_call_output after the prompt as the tool result', () => {
    const input = scriptInputOf(recorded[1]?.body)
    expect(input.prompts).toEqual(['@bash echo hi'])
    expect(input.toolResults).toHaveLength(1)
    expect(input.toolResults[0]).toMatch(/Process exited with code 0\n.*\nOutput:\nhi\n$/s)
  })

  it.each([
    [
      'a later prompt drops earlier tool results',
      [user('run: x'), { type: 'function_call_output', call_id: 'c', output: 'x' }, user('recall')],
      ['run: x', 'recall'],
      [],
    ],
    [
      'output as content parts',
      [user('run: y'), { type: 'function_call_output', call_id: 'c', output: [{ type: 'input_text', text: 'y!' }] }],
      ['run: y'],
      ['y!'],
    ],
    ['a turn_aborted block is not a prompt', [user('one'), user('<turn_aborted>\nstopped\n</turn_aborted>'), user('two')], ['one', 'two'], []],
    ['no input', undefined, [], []],
  ])('%s', (_name, input, prompts, toolResults) => {
    expect(scriptInputOf({ input })).toEqual({ prompts, toolResults })
  })
})

describe('openai-responses fake - streaming a step', () => {
  it('streams reasoning, message and exec_command in the order the CLI accepted, usage last', () => {
    const events = responseEvents({ thinking: 'think', text: 'say', toolCommand: 'echo hi' }, { response: 'r1', n: 1, model: 'gpt-5.5', inputTokens: 7 })
    const types = [...new Set(events.map((e) => e.event))]
    expect(types).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.reasoning_summary_part.added',
      'response.reasoning_summary_text.delta',
      'response.reasoning_summary_text.done',
      'response.reasoning_summary_part.done',
      'response.output_item.done',
      'response.content_part.added',
      'response.output_text.delta',
      'response.output_text.done',
      'response.content_part.done',
      'response.function_call_arguments.delta',
      'response.function_call_arguments.done',
      'response.completed',
    ])
    const completed = events.at(-1)?.data as {
      response: { output: { type: string; name?: string; arguments?: string }[]; usage: { input_tokens: number; output_tokens: number } }
    }
    expect(completed.response.output.map((o) => o.type)).toEqual(['reasoning', 'message', 'function_call'])
    expect(JSON.parse(completed.response.output[2]?.arguments ?? '')).toMatchObject({ cmd: 'echo hi' })
    expect(completed.response.output[2]?.name).toBe('exec_command')
    expect(completed.response.usage.input_tokens).toBe(7)
    expect(completed.response.usage.output_tokens).toBeGreaterThan(0)
  })
})

function user(text: string) {
  return { type: 'message', role: 'user', content: [{ type: 'input_text', text }] }
}
