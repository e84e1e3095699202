/**
 * The real OpenCode CLI (npm `opencode-ai` 1.18.33) attached to this service:
 * `opencode run --attach URL --format json …` creates a session, subscribes
 * to /event, sends a blocking prompt and prints the parts it sees. Offline,
 * with a HOME of its own; the fake Claude CLI does the turn.
 */
import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { opencodeCli } from '../fixtures/opencode-cli.ts'
import { startStack, type Stack } from '../fixtures/stack.ts'

let opencodeBin: string | undefined

interface Run {
  code: number | null
  stdout: string
  stderr: string
  lines: any[]
}

/** Runs `opencode run --attach` to the end; words are passed as separate arguments (the CLI quotes one with spaces). */
function opencodeRun(url: string, home: string, args: string[]): Promise<Run> {
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: home,
    XDG_CONFIG_HOME: join(home, '.config'),
    XDG_DATA_HOME: join(home, '.local/share'),
    XDG_CACHE_HOME: join(home, '.cache'),
    XDG_STATE_HOME: join(home, '.local/state'),
    // Offline: no models.dev catalogue, no update check.
    OPENCODE_DISABLE_MODELS_FETCH: '1',
    OPENCODE_DISABLE_AUTOUPDATE: '1',
  }
  return new Promise((resolve, reject) => {
    const child = spawn(opencodeBin!, ['run', '--attach', url, ...args], { env, cwd: home, stdio: ['ignore', 'pipe', 'pipe'] })
    let stdout = ''
    let stderr = ''
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk))
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk))
    const timer = setTimeout(() => {
      child.kill('SIGKILL')
      reject(new Error(`opencode run did not exit in 45 s; stdout: ${stdout}; stderr: ${stderr}`))
    }, 45_000)
    child.once('error', reject)
    child.once('exit', (code) => {
      clearTimeout(timer)
      const lines = stdout
        .split('\n')
        .filter((line) => line.startsWith('{'))
        .map((line) => JSON.parse(line))
      resolve({ code, stdout, stderr, lines })
    })
  })
}

describe('opencode cli - `opencode run --attach` against the service', () => {
  let stack: Stack
  let home: string

  beforeAll(async () => {
    opencodeBin = await opencodeCli()
    stack = await startStack()
    home = mkdtempSync(join(tmpdir(), 'opencode-home-'))
  }, 300_000) // the first run installs the CLI
  afterAll(async () => {
    await stack.close()
    rmSync(home, { recursive: true, force: true })
  })

  it('a tool turn: exits 0 and prints step_start, text, tool_use, text, step_finish', async () => {
    const run = await opencodeRun(stack.url, home, ['--format', 'json', 'tool:', 'printf', 'attached'])
    expect(run.code, run.stderr).toBe(0)
    expect(run.lines.map((line) => line.type)).toEqual(['step_start', 'text', 'tool_use', 'text', 'step_finish'])
    const tool = run.lines.find((line) => line.type === 'tool_use')
    expect(tool.part).toMatchObject({
      type: 'tool',
      tool: 'Bash',
      callID: expect.stringMatching(/^toolu_/),
      state: { status: 'completed', input: { command: 'printf attached' }, output: 'attached' },
    })
    expect(run.lines.at(-2).part.text).toBe('Done. The tool said: "attached"')
    expect(run.lines.at(-1).part).toMatchObject({ type: 'step-finish', reason: 'stop', tokens: { input: 24, output: 84 } })

    // The CLI made the session here, and the turn is stored with it.
    const sessionID = run.lines[0].sessionID
    const messages = (await (await fetch(`${stack.url}/session/${sessionID}/message`)).json()) as any[]
    expect(messages.map((m) => m.info.role)).toEqual(['user', 'assistant'])
    expect(messages[0].parts[0].text).toBe('tool: printf attached')
  })

  it('an answer in the default format: the text on stdout, exit 0', async () => {
    const run = await opencodeRun(stack.url, home, ['hello', 'from', 'opencode'])
    expect(run.code, run.stderr).toBe(0)
    expect(run.stdout).toContain('Echo: hello from opencode')
  })

  it('a failed turn: the error is printed', async () => {
    const run = await opencodeRun(stack.url, home, ['--format', 'json', 'fail'])
    const error = run.lines.find((line) => line.type === 'error')
    expect(error?.error).toMatchObject({ name: 'UnknownError', data: { code: 'ENGINE_ERROR' } })
  })
})
