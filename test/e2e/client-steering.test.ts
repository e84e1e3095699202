/**
 * Steering from the clients: the typed client's handlers and answers, the
 * `agent-runtime run` command (terminal, --approve, --deny, no terminal) and
 * the web console's cards, against the service running the real Claude Code
 * CLI (fake Anthropic API) in bubblewrap with `approval: ask`.
 */
import { spawn } from 'node:child_process'
import { existsSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { chromium, type Browser } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildConsole } from '../../scripts/build-console.ts'
import { connect, type AgentClient, type PermissionRequested, type QuestionAsked, type ServiceEvent } from '../../client/mod.ts'
import { freePort } from '../fixtures/nats-server.ts'
import { startStack, type Stack } from '../fixtures/stack.ts'
import { until } from '../fixtures/until.ts'
import { claudeRow } from './engines/claude.ts'
import type { EngineFixture } from './engines/row.ts'

const BIN = fileURLToPath(new URL('../../bin/agent-runtime.ts', import.meta.url))
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium'
const KEY = 'steering-client-key'
const TURN_MS = 60_000

let fixture: EngineFixture
let stack: Stack
let browser: Browser

beforeAll(async () => {
  fixture = await claudeRow.setup()
  // The service reads the console's bundle when it starts: built first (a fresh checkout has none).
  await buildConsole()
  ;[stack, browser] = await Promise.all([stackOnItsOrigin(), chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] })])
}, 120_000)

/** The console's origin must be allowed before the service listens, so the port is chosen first; another process may take it meanwhile: then another. */
async function stackOnItsOrigin(tries = 3): Promise<Stack> {
  const port = await freePort()
  try {
    return await startStack({
      server: { port },
      auth: { api_key: [KEY], allowed_origins: [`http://127.0.0.1:${port}`] },
      engine: { default: 'claude', approval: 'ask', approval_timeout: '60s' },
      engines: [fixture.config],
    })
  } catch (err) {
    if (tries <= 1 || (err as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw err
    return stackOnItsOrigin(tries - 1)
  }
}
afterAll(async () => {
  await browser?.close()
  await stack?.close()
  await fixture?.stop()
})

const canary = (sessionId: string) => path.join(stack.config.session.work_dir, sessionId, 'canary')

async function drain(events: AsyncIterableIterator<ServiceEvent>): Promise<ServiceEvent[]> {
  const seen: ServiceEvent[] = []
  for await (const event of events) seen.push(event)
  return seen
}

/** `agent-runtime run` as a script runs it (no terminal), or in a pseudo-terminal (`script`) that types `answer` when asked. */
function cli(args: string[], terminal?: { when: string; type: string }) {
  const command = [process.execPath, BIN, ...args]
  const child = terminal
    ? spawn('script', ['-qfec', command.map((part) => `'${part.replaceAll("'", `'\\''`)}'`).join(' '), '/dev/null'], {
        env: { ...process.env, AGENT_RUNTIME_API_KEY: KEY },
        stdio: ['pipe', 'pipe', 'pipe'],
      })
    : spawn(process.execPath, [BIN, ...args], { env: { ...process.env, AGENT_RUNTIME_API_KEY: KEY }, stdio: ['ignore', 'pipe', 'pipe'] })
  const output = { stdout: '', stderr: '' }
  let typed = false
  for (const stream of ['stdout', 'stderr'] as const) {
    child[stream]!.on('data', (chunk: Buffer) => {
      output[stream] += chunk.toString()
      if (terminal && !typed && (output.stdout + output.stderr).includes(terminal.when)) {
        typed = true
        child.stdin!.write(`${terminal.type}\n`)
      }
    })
  }
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => child.on('close', (code) => resolve({ code, ...output })))
}

describe('client steering - the typed client', () => {
  let client: AgentClient
  let other: AgentClient
  beforeAll(async () => {
    ;[client, other] = await Promise.all([connect({ url: stack.url, apiKey: KEY }), connect({ url: stack.url, apiKey: KEY })])
  })
  afterAll(() => {
    client?.close()
    other?.close()
  })

  it('client steering - onPermission gets the request, permissionReply allows it once; a client attaching mid-wait is handed it once and sees it settled', async () => {
    const session = client.session('client-allow')
    const requests: PermissionRequested[] = []
    session.onPermission((request) => requests.push(request))
    const turn = drain(session.execute('run: touch canary'))
    await until(() => requests.length === 1, 'the permission request', TURN_MS)
    expect(requests[0]!.permission).toMatchObject({ tool: { name: 'Bash' }, options: ['allow_once', 'allow_always', 'deny'] })

    // Another client follows from the start: the replay brings the request, still open.
    const late = other.session('client-allow')
    const handedLate: { request: PermissionRequested; signal: AbortSignal }[] = []
    late.onPermission((request, { signal }) => handedLate.push({ request, signal }))
    const following = late.follow()
    await until(() => handedLate.length === 1, 'the replayed request handed to the late client')
    expect(handedLate[0]!.request.permission.id).toBe(requests[0]!.permission.id)

    const resolved = await session.permissionReply(requests[0]!.permission.id, 'allow_once')
    expect(resolved).toMatchObject({ decision: 'allow_once', source: 'client', by: 'websocket' })
    await until(() => handedLate[0]!.signal.aborted, 'the late client told it was settled')
    expect((await turn).at(-1)).toMatchObject({ event: 'completed' })
    expect(existsSync(canary('client-allow'))).toBe(true)
    // A second answer is refused with the service's code.
    await expect(late.permissionReply(requests[0]!.permission.id, 'deny')).rejects.toMatchObject({ code: 'ALREADY_ANSWERED' })
    void following.return?.()
    expect(handedLate).toHaveLength(1)
  })

  it('client steering - onQuestion gets the options, answer sends the chosen label to the agent', async () => {
    const session = client.session('client-question')
    const asked: QuestionAsked[] = []
    session.onQuestion((request) => asked.push(request))
    const turn = drain(session.execute('ask: Which colour? | Red | Blue'))
    await until(() => asked.length === 1, 'the question', TURN_MS)
    expect(asked[0]!.question.questions[0]!.options.map((option) => option.label)).toEqual(['Red', 'Blue'])
    const resolved = await session.answer(asked[0]!.question.id, [['Blue']])
    expect(resolved).toMatchObject({ answers: [['Blue']], source: 'client' })
    const events = await turn
    expect(events.at(-1)).toMatchObject({ event: 'completed' })
    expect(events.find((event) => event.event === 'tool_result')?.data).toContain('Blue')
  })
})

describe('client steering - agent-runtime run', () => {
  it('run --approve: the tool call is allowed, the canary is made, exit 0', async () => {
    const result = await cli(['run', '--url', stack.url, '--session', 'cli-approve', '--approve', 'run: touch canary'])
    expect(result.code, result.stderr).toBe(0)
    expect(result.stderr).toContain('permission allow once (client, by websocket)')
    expect(existsSync(canary('cli-approve'))).toBe(true)
  })

  it('run --deny: the tool call is denied, no canary', async () => {
    const result = await cli(['run', '--url', stack.url, '--session', 'cli-deny', '--deny', 'run: touch canary'])
    expect(result.code, result.stderr).toBe(0)
    expect(result.stderr).toContain('permission deny (client, by websocket)')
    expect(existsSync(canary('cli-deny'))).toBe(false)
  })

  it('run --approve on a question: the first option is chosen', async () => {
    const result = await cli(['run', '--url', stack.url, '--session', 'cli-ask', '--approve', 'ask: Which colour? | Red | Blue'])
    expect(result.code, result.stderr).toBe(0)
    expect(result.stderr).toContain('answered [["Red"]]')
  })

  it('run with no terminal and no flag: prints the request and how to answer it, and denies it', async () => {
    const result = await cli(['run', '--url', stack.url, '--session', 'cli-unattended', 'run: touch canary'])
    expect(result.code, result.stderr).toBe(0)
    expect(result.stderr).toContain('permission: Bash wants to run:')
    expect(result.stderr).toContain('POST /v1/sessions/cli-unattended/reply {"permission_id":"per_')
    expect(result.stderr).toContain('--approve')
    expect(result.stderr).toContain('permission deny (client, by websocket)')
    expect(existsSync(canary('cli-unattended'))).toBe(false)
    expect(fixture.modelSaw('no one could be asked')).toBe(true)
  })

  it('run with --approve and --deny: a usage error naming both (exit 2)', async () => {
    const result = await cli(['run', '--url', stack.url, '--approve', '--deny', 'run: touch canary'])
    expect(result.code).toBe(2)
    expect(result.stderr).toContain('--approve and --deny exclude each other')
  })

  it('run on a terminal: asks, and "y" allows the call once', async () => {
    const result = await cli(['run', '--url', stack.url, '--session', 'cli-tty', 'run: touch canary'], { when: 'allow? [y] once', type: 'y' })
    expect(result.code, result.stdout).toBe(0)
    expect(result.stdout).toContain('permission: Bash wants to run:')
    expect(result.stdout).toContain('permission allow once (client, by websocket)')
    expect(existsSync(canary('cli-tty'))).toBe(true)
  })

  it('run on a terminal: a question is answered by its number', async () => {
    const result = await cli(['run', '--url', stack.url, '--session', 'cli-tty-ask', 'ask: Which colour? | Red | Blue'], { when: 'number or text:', type: '2' })
    expect(result.code, result.stdout).toBe(0)
    expect(result.stdout).toContain('  2. Blue')
    expect(result.stdout).toContain('answered [["Blue"]]')
  })
})

describe('client steering - the web console', () => {
  /** A console page signed in with the key, a new session open. */
  async function consoleSession() {
    const page = await browser.newPage()
    await page.goto(stack.url)
    await page.fill('#api-key', KEY)
    await page.click('#login button')
    await page.waitForSelector('#status:has-text("signed in")')
    await page.click('#new-session')
    await page.waitForSelector('#status:has-text("connected")')
    return { page, sessionId: (await page.textContent('#session-id'))! }
  }

  it('console - an approval card appears; Allow once lets the tool run and the card shows the outcome', async () => {
    const { page, sessionId } = await consoleSession()

    await page.fill('#prompt', 'run: touch canary')
    await page.click('#prompt-form button[type=submit]')
    await page.waitForSelector('.card.permission button:has-text("Allow once")', { timeout: TURN_MS })
    expect(await page.textContent('.card.permission pre.input')).toContain('"command": "touch canary"')
    expect(await page.textContent('.card.permission .card-title')).toContain('Bash asks to run:')
    await page.click('.card.permission button:has-text("Allow once")')
    await page.waitForSelector('.card.permission.settled .outcome:has-text("Allow once (client, websocket)")')
    await page.waitForSelector('.end.completed', { timeout: TURN_MS })
    expect(existsSync(canary(sessionId))).toBe(true)

    await page.fill('#prompt', 'ask: Which colour? | Red | Blue')
    await page.click('#prompt-form button[type=submit]')
    await page.waitForSelector('.card.question button.choice:has-text("Blue")', { timeout: TURN_MS })
    await page.click('.card.question button.choice:has-text("Blue")')
    await page.click('.card.question button:has-text("Submit")')
    await page.waitForSelector('.card.question.settled .outcome:has-text("Answered: Blue")')
    await page.waitForSelector('.end.completed >> nth=1', { timeout: TURN_MS })
    await page.close()
  })

  it('console - a card answered by another client shows that outcome; the input is shown as text, never as HTML', async () => {
    const { page, sessionId } = await consoleSession()
    const client = await connect({ url: stack.url, apiKey: KEY })
    try {
      const session = client.session(sessionId)
      const requests: PermissionRequested[] = []
      session.onPermission((request) => requests.push(request))
      const turn = drain(session.execute('run: touch "<img src=x onerror=alert(1)>"'))
      await page.waitForSelector('.card.permission button:has-text("Deny")', { timeout: TURN_MS })
      expect(await page.locator('.card.permission img').count()).toBe(0)
      expect(await page.textContent('.card.permission pre.input')).toContain('<img src=x onerror=alert(1)>')
      await until(() => requests.length === 1, 'the request at the client', TURN_MS)
      await session.permissionReply(requests[0]!.permission.id, 'deny', 'not from here')
      await page.waitForSelector('.card.permission.settled .outcome:has-text("Deny (client, websocket)")')
      expect(await page.locator('.card.permission button').count()).toBe(0)
      await turn
    } finally {
      client.close()
      await page.close()
    }
  })
})
