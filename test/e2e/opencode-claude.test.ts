/**
 * The whole chain with real programs: the OpenCode SDK (v2) drives this
 * service, which runs the real Claude Code CLI against the fake Anthropic API.
 */
import { createOpencodeClient, type Event, type Part, type ToolPart } from '@opencode-ai/sdk/v2/client'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startFakeAnthropic, type FakeAnthropic } from '../fakes/anthropic-api.ts'
import { claudeBin, claudeEnv, type ClaudeEnv } from '../fixtures/claude-env.ts'
import { startStack, type Stack } from '../fixtures/stack.ts'
import { StreamCollector } from '../gateway/opencode/sdk-events.ts'

describe('opencode layer - real Claude Code CLI behind the OpenCode SDK', () => {
  let fake: FakeAnthropic
  let cli: ClaudeEnv
  let stack: Stack
  const controller = new AbortController()

  beforeAll(async () => {
    fake = await startFakeAnthropic()
    cli = claudeEnv({ baseUrl: fake.url })
    // The runner hands the CLI the service's environment plus engine.env.
    stack = await startStack({ engine: { command: claudeBin, args: [], env: cli.env } })
  })
  afterAll(async () => {
    controller.abort()
    await stack?.close()
    await fake?.stop()
    cli?.cleanup()
  })

  it('a Bash tool turn arrives as reasoning, text, one tool part running → completed, text; a blocking prompt remembers it', async () => {
    const client = createOpencodeClient({ baseUrl: stack.url })
    const { stream } = await client.event.subscribe(undefined, { signal: controller.signal, sseMaxRetryAttempts: 1 })
    const events = new StreamCollector<Event>(stream)
    await events.next((e) => e.type === 'server.connected')

    const sessionID = (await client.session.create({ title: 'real claude' })).data!.id
    const accepted = await client.session.promptAsync({ sessionID, parts: [{ type: 'text', text: 'run: echo hi' }] })
    expect(accepted.response.status).toBe(202)
    await events.next((e) => e.type === 'session.idle' && e.properties.sessionID === sessionID, 45_000)

    const parts: Part[] = events.events.flatMap((e) => (e.type === 'message.part.updated' && e.properties.sessionID === sessionID ? [e.properties.part] : []))
    const tools = parts.filter((p): p is ToolPart => p.type === 'tool')
    expect(tools.map((p) => p.state.status)).toEqual(['running', 'completed'])
    expect(tools[1]!.id).toBe(tools[0]!.id)
    expect(tools[1]!.callID).toBe(tools[0]!.callID)
    expect(tools[1]).toMatchObject({ tool: 'Bash', state: { input: { command: 'echo hi' }, output: expect.stringContaining('hi') } })
    const finished = parts.filter((p) => (p.type === 'text' || p.type === 'reasoning') && p.time?.end !== undefined)
    expect(finished.map((p) => [p.type, p.type === 'text' || p.type === 'reasoning' ? p.text : ''])).toEqual([
      ['reasoning', 'The user wants me to run a command. I will use Bash.'],
      ['text', 'Let me run a command.'],
      ['text', 'Done. The tool said: hi'],
    ])
    const assistant = events.events
      .filter((e) => e.type === 'message.updated' && e.properties.sessionID === sessionID && e.properties.info.role === 'assistant')
      .at(-1)
    expect(assistant?.type === 'message.updated' && assistant.properties.info).toMatchObject({
      finish: 'stop',
      modelID: expect.stringMatching(/^claude-/),
      time: { completed: expect.any(Number) },
    })
    expect(assistant?.type === 'message.updated' && assistant.properties.info.role === 'assistant' && assistant.properties.info.tokens.output).toBeGreaterThan(
      0,
    )

    const answer = await client.session.prompt({ sessionID, parts: [{ type: 'text', text: 'recall' }] })
    expect(answer.data!.parts.filter((p) => p.type === 'text').map((p) => (p.type === 'text' ? p.text : ''))).toEqual(['Earlier prompts: run: echo hi'])
    expect(fake.messageRequests().length).toBe(3)
  })
})
