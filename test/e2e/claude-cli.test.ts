/**
 * Drives the real Claude Code CLI (stream-json in and out) against the fake
 * Anthropic API. These tests prove the fake is faithful enough for the CLI:
 * a tool round trip, an interrupt, and a resumed conversation.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { promptOf, startFakeAnthropic, type FakeAnthropic } from '../fakes/anthropic-api.ts'
import { claudeBin, claudeEnv } from '../fixtures/claude-env.ts'
import { until } from '../fixtures/until.ts'

type Line = { type?: string; subtype?: string; [key: string]: any }

/** How long a wait for one stdout line may take; a turn against the fake takes under a second. */
const LINE_TIMEOUT_MS = 15_000

/** One running CLI process with its stdout parsed into JSON lines. */
interface Cli {
  child: ChildProcessWithoutNullStreams
  lines: Line[]
  stderr(): string
  send(message: object): void
  prompt(text: string): void
  /** Resolves with the first line (from index `from` on) that matches. */
  waitFor(match: (line: Line) => boolean, from?: number): Promise<Line>
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>
}

const running: Cli[] = []
const dirs: string[] = []

function tempDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix))
  dirs.push(dir)
  return dir
}

function startCli(args: string[], options: { cwd: string; env: Record<string, string> }): Cli {
  const child = spawn(
    claudeBin,
    ['-p', '--input-format', 'stream-json', '--output-format', 'stream-json', '--verbose', '--permission-mode', 'bypassPermissions', ...args],
    { cwd: options.cwd, env: options.env, stdio: ['pipe', 'pipe', 'pipe'] },
  )
  const lines: Line[] = []
  const waiters = new Set<() => void>()
  let stdout = ''
  let stderr = ''
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    stdout += chunk
    let end: number
    while ((end = stdout.indexOf('\n')) >= 0) {
      const text = stdout.slice(0, end).trim()
      stdout = stdout.slice(end + 1)
      if (text.length === 0) continue
      try {
        lines.push(JSON.parse(text) as Line)
      } catch {
        lines.push({ type: 'not-json', text })
      }
    }
    for (const wake of waiters) wake()
  })
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk))
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => {
      resolve({ code, signal })
      for (const wake of waiters) wake()
    }),
  )

  const cli: Cli = {
    child,
    lines,
    stderr: () => stderr,
    send: (message) => child.stdin.write(`${JSON.stringify(message)}\n`),
    prompt: (text) => cli.send({ type: 'user', message: { role: 'user', content: text } }),
    waitFor: (match, from = 0) =>
      new Promise<Line>((resolve, reject) => {
        const check = () => {
          const found = lines.slice(from).find(match)
          if (found) return done(() => resolve(found))
          if (child.exitCode !== null || child.signalCode !== null) {
            return done(() => reject(new Error(`CLI exited (${child.exitCode ?? child.signalCode}) first; stderr: ${stderr}`)))
          }
        }
        const timer = setTimeout(
          () =>
            done(() =>
              reject(
                new Error(`no matching line in ${LINE_TIMEOUT_MS} ms; got ${lines.map((l) => `${l.type}/${l.subtype ?? ''}`).join(', ')}; stderr: ${stderr}`),
              ),
            ),
          LINE_TIMEOUT_MS,
        )
        const done = (finish: () => void) => {
          clearTimeout(timer)
          waiters.delete(check)
          finish()
        }
        waiters.add(check)
        check()
      }),
    exited,
  }
  running.push(cli)
  return cli
}

const isResult = (l: Line) => l.type === 'result'
const contentOf = (l: Line): any[] => (Array.isArray(l.message?.content) ? l.message.content : [])

describe('claude cli - real CLI against the fake Anthropic API', () => {
  let fake: FakeAnthropic

  beforeEach(async () => {
    fake = await startFakeAnthropic()
  })

  afterEach(async () => {
    for (const cli of running.splice(0)) {
      if (cli.child.exitCode === null && cli.child.signalCode === null) {
        cli.child.kill('SIGKILL')
        await cli.exited
      }
    }
    await fake.stop()
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true })
  })

  it('claude cli - a Bash tool round trip ends in one success result', async () => {
    const { env, home } = claudeEnv({ baseUrl: fake.url })
    dirs.push(home)
    const sessionId = randomUUID()
    const cli = startCli(['--session-id', sessionId], { cwd: tempDir('claude-cwd-'), env })
    cli.prompt('run: echo hi')

    const result = await cli.waitFor(isResult)
    expect(result).toMatchObject({ subtype: 'success', is_error: false, result: 'Done. The tool said: hi', session_id: sessionId })

    const init = cli.lines.find((l) => l.type === 'system' && l.subtype === 'init')
    expect(init).toMatchObject({ session_id: sessionId, permissionMode: 'bypassPermissions' })
    const toolUse = cli.lines.flatMap(contentOf).find((b) => b.type === 'tool_use')
    expect(toolUse).toMatchObject({ name: 'Bash', input: { command: 'echo hi' } })
    const thinking = cli.lines.flatMap(contentOf).find((b) => b.type === 'thinking')
    expect(thinking).toMatchObject({ signature: 'fakesig' })
    const toolResult = cli.lines
      .filter((l) => l.type === 'user')
      .flatMap(contentOf)
      .find((b) => b.type === 'tool_result')
    expect(toolResult).toMatchObject({ tool_use_id: toolUse.id, is_error: false })
    expect(String(toolResult.content)).toContain('hi')
    const texts = cli.lines
      .filter((l) => l.type === 'assistant')
      .flatMap(contentOf)
      .filter((b) => b.type === 'text')
    expect(texts.map((b) => b.text)).toEqual(['Let me run a command.', 'Done. The tool said: hi'])
    expect(cli.lines.filter(isResult)).toHaveLength(1)

    // The CLI only talks to /v1/messages, streaming, and sent the tool result back.
    expect(fake.requests.map((r) => `${r.method} ${r.url}`)).toEqual(['POST /v1/messages?beta=true', 'POST /v1/messages?beta=true'])
    expect(fake.requests.every((r) => r.body?.stream === true && r.status === 200)).toBe(true)

    // Closing stdin ends the process cleanly.
    cli.child.stdin.end()
    expect(await cli.exited).toEqual({ code: 0, signal: null })
  })

  it('claude cli - an interrupt control_request ends the turn with error_during_execution', async () => {
    const { env, home } = claudeEnv({ baseUrl: fake.url })
    dirs.push(home)
    const cli = startCli(['--session-id', randomUUID()], { cwd: tempDir('claude-cwd-'), env })
    cli.prompt('slow: 5000')
    // The fake's state changes outside any stdout line: polled.
    await until(() => fake.messageRequests().length === 1, 'the fake to receive the streaming request', LINE_TIMEOUT_MS, 10)

    const sentAt = Date.now()
    cli.send({ type: 'control_request', request_id: 'r1', request: { subtype: 'interrupt' } })
    const response = await cli.waitFor((l) => l.type === 'control_response')
    expect(response).toMatchObject({ type: 'control_response', response: { subtype: 'success', request_id: 'r1' } })
    const result = await cli.waitFor(isResult)
    expect(result).toMatchObject({ subtype: 'error_during_execution', is_error: true })
    expect(Date.now() - sentAt).toBeLessThan(3000)
    const marker = cli.lines
      .filter((l) => l.type === 'user')
      .flatMap(contentOf)
      .find((b) => b.type === 'text')
    expect(marker?.text).toBe('[Request interrupted by user]')
    // The CLI dropped the streaming request, and the fake noticed.
    await until(() => fake.messageRequests()[0]?.disconnected === true, 'the fake to see the request dropped', 3000, 10)

    // The process survives the interrupt and runs the next turn.
    const from = cli.lines.length
    cli.prompt('after the interrupt')
    expect(await cli.waitFor(isResult, from)).toMatchObject({ subtype: 'success', result: 'Echo: after the interrupt' })
  })

  it('claude cli - --resume in a new process continues the conversation with its history', async () => {
    const first = claudeEnv({ baseUrl: fake.url })
    dirs.push(first.home)
    const cwd = tempDir('claude-cwd-')
    const sessionId = randomUUID()

    const one = startCli(['--session-id', sessionId, '--append-system-prompt', 'APPENDED-MARKER-42'], { cwd, env: first.env })
    one.prompt('first prompt ALPHA')
    expect(await one.waitFor(isResult)).toMatchObject({ subtype: 'success', result: 'Echo: first prompt ALPHA' })
    expect(fake.lastSystemPrompt()).toContain('APPENDED-MARKER-42')
    one.child.kill('SIGTERM')
    expect(await one.exited).toEqual({ code: 143, signal: null })

    const second = claudeEnv({ baseUrl: fake.url, home: first.home })
    const two = startCli(['--resume', sessionId], { cwd, env: second.env })
    two.prompt('recall')
    const result = await two.waitFor(isResult)
    expect(result).toMatchObject({ subtype: 'success', session_id: sessionId, result: 'Earlier prompts: first prompt ALPHA' })

    const last = fake.messageRequests().at(-1)!
    const userPrompts = (last.body.messages as any[]).filter((m) => m.role === 'user').map(promptOf)
    expect(userPrompts).toEqual(['first prompt ALPHA', 'recall'])
    expect(last.headers['x-claude-code-session-id']).toBe(sessionId)
    // The system prompt is stored with the conversation: a resumed process reuses
    // it (an --append-system-prompt given to --resume is ignored).
    expect(fake.lastSystemPrompt()).toContain('APPENDED-MARKER-42')
  })

  it('claude cli - an API failure ends the turn with an error result carrying the status', async () => {
    const { env, home } = claudeEnv({ baseUrl: fake.url })
    dirs.push(home)
    const cli = startCli(['--session-id', randomUUID()], { cwd: tempDir('claude-cwd-'), env })
    fake.failNext(500)
    cli.prompt('hello')
    expect(await cli.waitFor(isResult)).toMatchObject({ is_error: true, api_error_status: 500 })
    expect(fake.requests.map((r) => r.status)).toEqual([500])
    cli.child.stdin.end()
    expect((await cli.exited).code).toBe(1)
  })
})
