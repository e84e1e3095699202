import { spawn } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { afterEach, describe, expect, it } from 'vitest'
import { connect } from '../../../client/mod.ts'
import { startStack, type Stack } from '../../fixtures/stack.ts'

const BIN = fileURLToPath(new URL('../../../bin/agent-runtime.ts', import.meta.url))

let stack: Stack | undefined
afterEach(async () => {
  await stack?.close()
  stack = undefined
})

/** `agent-runtime <args>` as a user runs it; `during` sees its output as it comes and may signal it. */
function cli(
  args: string[],
  env: NodeJS.ProcessEnv = {},
  during?: (output: { stdout: string; stderr: string }, signal: (name: NodeJS.Signals) => void) => void,
) {
  const child = spawn(process.execPath, [BIN, ...args], { env: { ...process.env, AGENT_RUNTIME_API_KEY: '', ...env }, stdio: ['ignore', 'pipe', 'pipe'] })
  const output = { stdout: '', stderr: '' }
  const seen = () => during?.(output, (name) => child.kill(name))
  for (const stream of ['stdout', 'stderr'] as const) {
    child[stream].on('data', (chunk: Buffer) => {
      output[stream] += chunk.toString()
      seen()
    })
  }
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => child.on('close', (code) => resolve({ code, ...output })))
}

describe('agent-runtime run and attach - the real command against the service', () => {
  it('run - prints the answer on stdout, the tool call and totals on stderr, and exits 0', async () => {
    stack = await startStack()
    const result = await cli(['run', '--url', stack.url, '--session', 'cli-1', 'tool: echo hi'])
    expect(result.code).toBe(0)
    expect(result.stdout).toMatch(/Done\. The tool said: "?hi"?\n/)
    expect(result.stdout).not.toContain('tool Bash')
    expect(result.stderr).toContain('tool Bash {"command":"echo hi"')
    expect(result.stderr).toContain('tool output: hi\n')
    expect(result.stderr).toMatch(/completed: \d+ in \/ \d+ out tokens/)
  })

  it('run - a failed turn exits 1 with its error code', async () => {
    stack = await startStack()
    const result = await cli(['run', '--url', stack.url, 'fail'])
    expect(result.code).toBe(1)
    expect(result.stderr).toContain('error ENGINE_ERROR')
  })

  it('run - Ctrl-C stops the running turn, which ends stopped (exit 1)', async () => {
    stack = await startStack()
    let interrupted = false
    const result = await cli(['run', '--url', stack.url, 'sleep: 30'], {}, (output, signal) => {
      if (!interrupted && output.stderr.includes('tool Bash')) {
        interrupted = true
        signal('SIGINT')
      }
    })
    expect(result.code).toBe(1)
    expect(result.stderr).toContain('stopped: interrupted')
  })

  it('run - the key from AGENT_RUNTIME_API_KEY; a wrong key is refused at once (exit 1, 401 UNAUTHORIZED)', async () => {
    stack = await startStack({ auth: { api_key: ['k-right'] } })
    expect((await cli(['run', '--url', stack.url, 'hello'], { AGENT_RUNTIME_API_KEY: 'k-right' })).code).toBe(0)
    const refused = await cli(['run', '--url', stack.url, '--api-key', 'k-wrong', 'hello'])
    expect(refused.code).toBe(1)
    expect(refused.stderr).toContain('401 UNAUTHORIZED')
  })

  it('run - usage errors exit 2 and say what is missing', async () => {
    const result = await cli(['run', 'hello'], { AGENT_RUNTIME_URL: '' })
    expect(result.code).toBe(2)
    expect(result.stderr).toContain('--url')
  })

  it('attach - follows a session: its history, then a turn another client runs, until Ctrl-C (exit 0)', async () => {
    stack = await startStack()
    const client = await connect({ url: stack.url })
    for await (const _ of client.session('watched').execute('first prompt')) void _
    let ran = false
    const running: Promise<unknown>[] = []
    const result = await cli(['attach', '--url', stack.url, '--json', 'watched'], {}, (output, signal) => {
      const lines = output.stdout.split('\n').filter((line) => line.startsWith('{'))
      const completed = lines.filter((line) => (JSON.parse(line) as { event: string }).event === 'completed').length
      if (completed === 1 && !ran) {
        ran = true
        running.push(
          (async () => {
            for await (const _ of client.session('watched').execute('second prompt')) void _
          })(),
        )
      }
      if (completed === 2) signal('SIGINT')
    })
    await Promise.all(running)
    client.close()
    expect(result.code).toBe(0)
    const events = result.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { event: string; data?: string; seq?: number })
    const answers = events.filter((event) => event.event === 'answer').map((event) => event.data)
    expect(answers).toEqual(['Echo: first prompt', 'Echo: second prompt'])
    const seqs = events.flatMap((event) => (event.seq === undefined ? [] : [event.seq]))
    expect(seqs).toEqual([...seqs].sort((a, b) => a - b))
  })
})
