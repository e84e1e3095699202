import { readFileSync } from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { RUN_TEXT, RUN_THINKING } from './model-script.ts'
import { chatChunks, isTitleRequest, scriptInputOf } from './openai-chat.ts'

/** What the real OpenCode 1.18.33 sent to the fake (three turns of one session: a tool call, a denied one, recall). */
const recorded: { body: any; headers: Record<string, string> }[] = JSON.parse(
  readFileSync(path.resolve(import.meta.dirname, 'recordings/opencode-1.18.33/chat-requests-trimmed.json'), 'utf8'),
)

describe('openai-chat fake - read as the real OpenCode CLI sends it', () => {
  it('the recorded requests: streaming with usage, OpenCode tools offered except in the title request', () => {
    for (const request of recorded) {
      expect(request.body).toMatchObject({ stream: true, stream_options: { include_usage: true }, model: 'fake-model' })
      expect(request.headers['user-agent']).toMatch(/^opencode\/1\.18\.33 /)
    }
    const titles = recorded.filter((r) => isTitleRequest(r.body))
    expect(titles).toHaveLength(1)
    for (const request of recorded.filter((r) => !isTitleRequest(r.body)))
      expect(request.body.tools).toEqual(expect.arrayContaining(['bash', 'read', 'write', 'edit']))
  })

  it('the shared script reads prompts and tool results from the recorded conversation', () => {
    const inputs = recorded.filter((r) => !isTitleRequest(r.body)).map((r) => scriptInputOf(r.body))
    expect(inputs).toEqual([
      { prompts: ['run: echo recorded-ok'], toolResults: [] },
      { prompts: ['run: echo recorded-ok'], toolResults: ['recorded-ok\n'] },
      { prompts: ['run: echo recorded-ok', 'run: rm -rf /tmp/nothing'], toolResults: [] },
      { prompts: ['run: echo recorded-ok', 'run: rm -rf /tmp/nothing'], toolResults: ['Blocked by the runtime: recorded denial'] },
      { prompts: ['run: echo recorded-ok', 'run: rm -rf /tmp/nothing', 'recall'], toolResults: [] },
    ])
    // The title request's instruction is not a prompt.
    expect(scriptInputOf(recorded.find((r) => isTitleRequest(r.body))!.body)).toEqual({ prompts: ['run: echo recorded-ok'], toolResults: [] })
  })

  it('a tool step streams reasoning, text, a bash tool call in pieces, tool_calls, then usage', () => {
    const chunks = chatChunks(
      { thinking: RUN_THINKING, text: RUN_TEXT, toolCommand: 'echo hi' },
      { completion: 'c', n: 7, model: 'm', inputTokens: 10 },
    ) as any[]
    const deltas = chunks.flatMap((c) => c.choices.map((choice: any) => choice.delta))
    expect(deltas.map((d) => d.reasoning_content ?? '').join('')).toBe(RUN_THINKING)
    expect(deltas.map((d) => d.content ?? '').join('')).toBe(RUN_TEXT)
    const calls = deltas.flatMap((d) => d.tool_calls ?? [])
    expect(calls[0]).toMatchObject({ index: 0, id: 'call_fake_7', type: 'function', function: { name: 'bash', arguments: '' } })
    expect(JSON.parse(calls.map((c: any) => c.function.arguments).join(''))).toEqual({ command: 'echo hi', description: 'Run the command' })
    expect(chunks.at(-2).choices[0].finish_reason).toBe('tool_calls')
    expect(chunks.at(-1)).toMatchObject({ choices: [], usage: { prompt_tokens: 10, completion_tokens: expect.any(Number) } })
  })
})
