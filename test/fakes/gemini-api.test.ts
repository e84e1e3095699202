import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { RUN_TEXT, RUN_THINKING } from './model-script.ts'
import { scriptInputOf, streamChunks } from './gemini-api.ts'

/** What Gemini CLI 0.61.0 sent a fake (../shared/reference/gemini-cli/): the router call, a prompt, the tool result. */
const recorded: { method: string; model: string; body: any }[] = JSON.parse(
  readFileSync(new URL('./recordings/gemini-cli-0.61.0/gemini-requests-trimmed.json', import.meta.url), 'utf8'),
)

describe('fake gemini api - reads what the CLI sends', () => {
  it.each([
    { n: 1, what: 'a prompt after the session context part', expected: { prompts: ['@bash echo hi'], toolResults: [] } },
    {
      n: 2,
      what: 'the functionResponse after the model call',
      expected: { prompts: ['@bash echo hi'], toolResults: ['<untrusted_context>\nOutput: hi\nProcess Group PGID: 19954\n</untrusted_context>'] },
    },
  ])('request $n: $what', ({ n, expected }) => {
    expect(recorded[n]?.method).toBe('streamGenerateContent')
    expect(scriptInputOf(recorded[n]?.body)).toEqual(expected)
  })

  it('the router call is a generateContent asking for JSON (answered apart, not by the script)', () => {
    expect(recorded[0]).toMatchObject({ method: 'generateContent', model: 'gemini-3.5-flash-lite' })
  })

  it('a denied call (functionResponse with error) is a tool result too', () => {
    const body = {
      contents: [
        { role: 'user', parts: [{ text: 'run: rm -rf /' }] },
        { role: 'model', parts: [{ functionCall: { name: 'run_shell_command' } }] },
        { role: 'user', parts: [{ functionResponse: { name: 'run_shell_command', response: { error: 'rejected' } } }] },
      ],
    }
    expect(scriptInputOf(body)).toEqual({ prompts: ['run: rm -rf /'], toolResults: ['rejected'] })
  })
})

describe('fake gemini api - streams as the recordings show', () => {
  it('a tool step: a thought, text pieces, then the function call with finishReason and usage on the last chunk', () => {
    const chunks = streamChunks(
      { thinking: RUN_THINKING, text: RUN_TEXT, toolCommand: 'echo hi' },
      { n: 3, model: 'gemini-2.5-flash', promptTokens: 100 },
    ) as any[]
    const parts = chunks.flatMap((c) => c.candidates[0].content.parts)
    expect(parts[0]).toEqual({ text: `**Running the command**\n${RUN_THINKING}`, thought: true })
    expect(
      parts
        .filter((p) => typeof p.text === 'string' && !p.thought)
        .map((p) => p.text)
        .join(''),
    ).toBe(RUN_TEXT)
    expect(parts.at(-1)).toEqual({
      functionCall: { id: 'call_fake_3', name: 'run_shell_command', args: { command: 'echo hi', description: 'Run the command' } },
    })
    expect(chunks.slice(0, -1).every((c) => c.candidates[0].finishReason === undefined && c.usageMetadata === undefined)).toBe(true)
    expect(chunks.at(-1)).toMatchObject({ candidates: [{ finishReason: 'STOP' }], usageMetadata: { promptTokenCount: 100 } })
  })

  it('a text step ends with its last piece on the finishing chunk', () => {
    const chunks = streamChunks({ text: 'Echo: hello there' }, { n: 1, model: 'm', promptTokens: 5 }) as any[]
    expect(chunks.map((c) => c.candidates[0].content.parts[0]?.text).join('')).toBe('Echo: hello there')
    expect(chunks.at(-1).candidates[0].content.parts).toHaveLength(1)
  })
})
