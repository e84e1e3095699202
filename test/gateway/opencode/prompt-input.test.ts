import { describe, expect, it } from 'vitest'
import { ServiceError } from '../../../contract/mod.ts'
import { toModelRef, toPromptInput } from '../../../gateway/opencode/prompt-input.ts'
import { parseBody } from '../../../gateway/json-body.ts'
import { PromptBody } from '../../../gateway/opencode/schemas/request.ts'

const read = (raw: unknown) => toPromptInput(parseBody(PromptBody, raw), 'agent-runtime')

function codeAndMessage(run: () => unknown): { code: string; message: string } {
  try {
    run()
  } catch (err) {
    if (err instanceof ServiceError) return { code: err.code, message: err.message }
    throw err
  }
  throw new Error('expected a ServiceError')
}

describe('prompt input - the spec body and the OpenCode body', () => {
  it.each([
    { name: 'spec prompt', body: { prompt: 'hi' }, expected: { shape: 'spec', text: 'hi' } },
    {
      name: 'spec with system_prompt, agent and model string',
      body: { prompt: 'hi', system_prompt: 'terse', agent: 'plan', model: 'anthropic/claude-x' },
      expected: { shape: 'spec', text: 'hi', instructions: 'terse', agent: 'plan', model: { providerID: 'anthropic', modelID: 'claude-x' } },
    },
    { name: 'opencode parts', body: { parts: [{ type: 'text', text: 'hello' }] }, expected: { shape: 'opencode', text: 'hello' } },
    {
      name: 'opencode text parts joined, other parts skipped',
      body: {
        parts: [
          { type: 'text', text: 'a' },
          { type: 'file', url: 'file:///x', mime: 'text/plain' },
          { type: 'text', text: 'b' },
        ],
      },
      expected: { shape: 'opencode', text: 'a\nb' },
    },
    {
      name: 'opencode with system, model object and messageID',
      body: { parts: [{ type: 'text', text: 'x' }], system: 'S', model: { providerID: 'p', modelID: 'm' }, messageID: 'msg_abc', tools: { bash: true } },
      expected: { shape: 'opencode', text: 'x', instructions: 'S', model: { providerID: 'p', modelID: 'm' }, messageID: 'msg_abc' },
    },
    { name: 'prompt wins over parts', body: { prompt: 'p', parts: [{ type: 'text', text: 'q' }] }, expected: { shape: 'spec', text: 'p' } },
  ])('$name', ({ body, expected }) => {
    expect(read(body)).toEqual(expected)
  })

  it.each([
    { name: 'empty body', body: undefined, code: 'BAD_REQUEST', field: '"prompt"' },
    { name: 'blank prompt', body: { prompt: '  ' }, code: 'BAD_REQUEST', field: '"prompt"' },
    { name: 'prompt not a string', body: { prompt: 5 }, code: 'BAD_REQUEST', field: '"prompt"' },
    { name: 'parts without text', body: { parts: [{ type: 'file', url: 'x' }] }, code: 'BAD_REQUEST', field: '"parts"' },
    { name: 'parts not a list', body: { parts: 'hi' }, code: 'BAD_REQUEST', field: '"parts"' },
    { name: 'noReply', body: { parts: [{ type: 'text', text: 'x' }], noReply: true }, code: 'BAD_REQUEST', field: '"noReply"' },
    { name: 'a list as body', body: [1], code: 'BAD_REQUEST', field: 'JSON object' },
  ])('rejects $name naming the field', ({ body, code, field }) => {
    const error = codeAndMessage(() => read(body))
    expect(error.code).toBe(code)
    expect(error.message).toContain(field)
  })

  it.each([
    { model: 'anthropic/claude-x', expected: { providerID: 'anthropic', modelID: 'claude-x' } },
    { model: 'org/team/model', expected: { providerID: 'org', modelID: 'team/model' } },
    { model: 'sonnet', expected: { providerID: 'agent-runtime', modelID: 'sonnet' } },
    { model: '', expected: undefined },
    { model: undefined, expected: undefined },
  ])('model $model', ({ model, expected }) => {
    expect(toModelRef(model, 'agent-runtime')).toEqual(expected)
  })
})
