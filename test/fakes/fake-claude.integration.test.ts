import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterEach, describe, expect, it } from 'vitest'
import { parseClaudeLine } from '../../runner/engine/claude/parse.ts'
import type { EngineOutput, TurnResult } from '../../runner/engine/engine.ts'
import { LineSplitter } from '../../runner/engine/line-splitter.ts'
import { RECORDED_KINDS, recording } from '../fixtures/claude-code/recordings.ts'

const FAKE = fileURLToPath(new URL('./fake-claude.ts', import.meta.url))
const STREAM_FLAGS = ['-p', '--input-format', 'stream-json', '--output-format', 'stream-json', '--verbose']

const cleanups: (() => void)[] = []
afterEach(() => {
  for (const cleanup of cleanups.splice(0).reverse()) cleanup()
})

/** A temporary HOME-like config dir and sandbox cwd, removed after the test. */
function sandbox(): { configDir: string; cwd: string } {
  const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'fake-claude-')))
  cleanups.push(() => fs.rmSync(root, { recursive: true, force: true }))
  const configDir = path.join(root, 'config')
  const cwd = path.join(root, 'work')
  fs.mkdirSync(cwd, { recursive: true })
  return { configDir, cwd }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

async function until(what: string, check: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
}

/** One fake CLI process, its stdout split and parsed as the runner would. */
class Run {
  readonly child: ChildProcessWithoutNullStreams
  readonly lines: string[] = []
  readonly outputs: EngineOutput[] = []
  readonly dropped: number[] = []
  stderr = ''
  exit: { code: number | null; signal: string | null } | undefined
  readonly exited: Promise<{ code: number | null; signal: string | null }>

  constructor(args: string[], box: { configDir: string; cwd: string }, env: Record<string, string> = {}) {
    this.child = spawn(process.execPath, [FAKE, ...args], {
      cwd: box.cwd,
      env: { ...process.env, CLAUDE_CONFIG_DIR: box.configDir, ...env },
    })
    const splitter = new LineSplitter({ maxLineBytes: 64 * 1024 * 1024, onOverlong: (n) => this.dropped.push(n) })
    const take = (lines: string[]) => {
      for (const line of lines) {
        this.lines.push(line)
        this.outputs.push(...parseClaudeLine(line))
      }
    }
    this.child.stdout.on('data', (chunk: Buffer) => take(splitter.push(chunk)))
    this.child.stdout.on('end', () => take(splitter.end()))
    this.child.stderr.setEncoding('utf8').on('data', (s: string) => (this.stderr += s))
    this.exited = new Promise((resolve) => {
      this.child.on('close', (code, signal) => {
        this.exit = { code, signal }
        resolve(this.exit)
      })
    })
    cleanups.push(() => {
      if (this.exit === undefined) this.child.kill('SIGKILL')
    })
  }

  send(prompt: string): void {
    this.child.stdin.write(JSON.stringify({ type: 'user', message: { role: 'user', content: prompt } }) + '\n')
  }

  interrupt(requestId: string): void {
    this.child.stdin.write(JSON.stringify({ type: 'control_request', request_id: requestId, request: { subtype: 'interrupt' } }) + '\n')
  }

  kinds(): string[] {
    return this.outputs.map((o) => o.kind)
  }

  results(): TurnResult[] {
    return this.outputs.flatMap((o) => (o.kind === 'result' ? [o.result] : []))
  }

  texts(): string[] {
    return this.outputs.flatMap((o) => (o.kind === 'text' ? [o.text] : []))
  }

  /** Raw `type` of every stdout line (non-JSON lines give `-`). */
  types(): string[] {
    return this.lines.map((l) => {
      try {
        return String((JSON.parse(l) as { type?: unknown }).type)
      } catch {
        return '-'
      }
    })
  }

  async waitForResults(n: number): Promise<void> {
    await until(`${n} result(s); got ${this.kinds().join(',')}; stderr ${this.stderr}`, () => this.results().length >= n)
  }

  async waitForKind(kind: string): Promise<void> {
    await until(`a ${kind}; got ${this.kinds().join(',')}`, () => this.kinds().includes(kind))
  }
}

const kindsOf = (name: string) => RECORDED_KINDS[name] ?? []

/**
 * The shape of a stream of lines: each line's type (a stream_event's API event type and delta
 * type), runs of one shape counted once, `system` lines left out (their number varies).
 */
function streamShape(lines: string[]): string[] {
  const shapes = lines.flatMap((l) => {
    const line = JSON.parse(l) as { type: string; event?: { type: string; delta?: { type?: string } } }
    if (line.type === 'system') return []
    return [line.type === 'stream_event' ? `${line.event?.type}${line.event?.delta?.type ? `/${line.event.delta.type}` : ''}` : line.type]
  })
  return shapes.filter((shape, i) => shape !== shapes[i - 1])
}
const typesOf = (name: string) => recording(name).map((l) => String((JSON.parse(l) as { type: unknown }).type))

describe('fake-claude', () => {
  it('fake-claude - --version prints the real version string', async () => {
    const run = new Run(['--version'], sandbox())
    expect(await run.exited).toEqual({ code: 0, signal: null })
    expect(run.lines).toEqual(['2.1.330 (Claude Code)'])
  })

  it('fake-claude - a tool turn matches sample-stream.jsonl and runs the command for real', async () => {
    const box = sandbox()
    const run = new Run([...STREAM_FLAGS, '--permission-mode', 'bypassPermissions'], box)
    run.send('please tool: echo hi')
    await run.waitForResults(1)
    run.send('tool: pwd; echo $$ $(cut -d" " -f5 /proc/$$/stat)')
    await run.waitForResults(2)
    run.child.stdin.end()
    expect(await run.exited).toEqual({ code: 0, signal: null })
    expect(run.kinds()).toEqual([...kindsOf('sample-stream.jsonl'), ...kindsOf('sample-stream.jsonl')])
    const [init, , , toolUse, toolResult, text, result] = run.outputs
    expect(init).toMatchObject({ kind: 'init', model: 'claude-fake-1', version: '2.1.330' })
    expect(toolUse).toMatchObject({ kind: 'tool_use', name: 'Bash', input: { command: 'echo hi' } })
    if (toolUse?.kind !== 'tool_use') throw new Error('no tool_use')
    expect(toolResult).toEqual({ kind: 'tool_result', toolUseId: toolUse.id, content: 'hi', isError: false })
    expect(text).toMatchObject({ kind: 'text', text: 'Done. The tool said: "hi"' })
    expect(result).toMatchObject({
      kind: 'result',
      result: { isError: false, subtype: 'success', numTurns: 2, text: 'Done. The tool said: "hi"', model: 'claude-fake-1' },
    })
    // The second command printed its cwd, its pid and its process group.
    const second = run.outputs.filter((o) => o.kind === 'tool_result')[1]
    const [cwd, pid, pgid] = second?.kind === 'tool_result' ? second.content.split(/\s+/) : []
    expect(cwd).toBe(box.cwd)
    expect(pgid).toBe(pid) // a process group of its own
    expect(pgid).not.toBe(String(run.child.pid))
  })

  it("fake-claude - --include-partial-messages: a tool turn has the stream events of sample-stream-partial-messages.jsonl, and each block's deltas make its text", async () => {
    const run = new Run([...STREAM_FLAGS, '--include-partial-messages'], sandbox())
    run.send('tool: echo hi')
    await run.waitForResults(1)
    run.child.stdin.end()
    await run.exited
    expect(streamShape(run.lines)).toEqual(streamShape(recording('sample-stream-partial-messages.jsonl')))
    const deltas = run.outputs.filter((o) => o.kind === 'text_delta' || o.kind === 'thinking_delta')
    expect(deltas.length).toBeGreaterThan(3)
    const whole = run.outputs.filter((o) => o.kind === 'text' || o.kind === 'thinking')
    expect(whole.map((o) => o.text)).toEqual(['The user wants me to run a command. I will use Bash.', 'Let me run a command.', 'Done. The tool said: "hi"'])
    for (const block of whole) {
      const of = run.outputs.filter(
        (o) => (o.kind === 'text_delta' || o.kind === 'thinking_delta') && o.kind.startsWith(block.kind) && o.messageId === block.messageId,
      )
      expect(of.map((o) => (o as { text: string }).text).join('')).toBe(block.text)
    }
  })

  it('fake-claude - without --include-partial-messages there is no stream_event line', async () => {
    const run = new Run(STREAM_FLAGS, sandbox())
    run.send('tool: echo hi')
    await run.waitForResults(1)
    run.child.stdin.end()
    await run.exited
    expect(run.types()).not.toContain('stream_event')
  })

  it('fake-claude - a failing tool command gives an error tool_result', async () => {
    const run = new Run(STREAM_FLAGS, sandbox())
    run.send('tool: echo out; echo bad >&2; exit 3')
    await run.waitForResults(1)
    expect(run.outputs.find((o) => o.kind === 'tool_result')).toMatchObject({ content: 'out\nbad', isError: true })
  })

  it('fake-claude - three turns match sample-stdin-multiturn.jsonl, cost is cumulative', async () => {
    const run = new Run(STREAM_FLAGS, sandbox())
    for (const [i, prompt] of ['no tools please: one', 'tool: echo hi', 'no tools please: three'].entries()) {
      run.send(prompt)
      await run.waitForResults(i + 1)
    }
    expect(run.kinds()).toEqual(kindsOf('sample-stdin-multiturn.jsonl'))
    expect(run.results().map((r) => r.cumulativeCostUsd)).toEqual([0.001, 0.002, 0.003])
    expect(run.results().map((r) => [r.inputTokens, r.outputTokens])).toEqual([
      [12, 42],
      [24, 84],
      [12, 42],
    ])
    const ids = new Set(run.outputs.flatMap((o) => (o.kind === 'init' ? [o.cliSessionId] : [])))
    expect(ids.size).toBe(1)
  })

  it('fake-claude - a prompt sent mid-turn is queued after it', async () => {
    const run = new Run(STREAM_FLAGS, sandbox())
    run.send('sleep: 0.2')
    run.send('hello')
    await run.waitForResults(2)
    expect(run.kinds()).toEqual(['init', 'tool_use', 'tool_result', 'result', 'init', 'text', 'result'])
    expect(run.results()[1]?.text).toBe('Echo: hello')
  })

  it('fake-claude - fail matches sample-api-error-500.jsonl', async () => {
    const run = new Run(STREAM_FLAGS, sandbox())
    run.send('fail')
    await run.waitForResults(1)
    expect(run.kinds()).toEqual(kindsOf('sample-api-error-500.jsonl'))
    expect(run.types()).toEqual(typesOf('sample-api-error-500.jsonl'))
    expect(run.results()[0]).toMatchObject({ isError: true, apiErrorStatus: 500, text: expect.stringMatching(/^API Error: 500/) })
    expect(run.texts()[0]).toMatch(/^API Error: 500/)
    run.send('hello') // the process lives on
    await run.waitForResults(2)
  })

  it('fake-claude - interrupt while the model thinks matches sample-stdin-interrupt.jsonl', async () => {
    const run = new Run(STREAM_FLAGS, sandbox(), { FAKE_CLAUDE_MODEL_DELAY_MS: '10000' })
    run.send('hello')
    await run.waitForKind('init')
    run.interrupt('req_int_1')
    await run.waitForResults(1)
    expect(run.kinds()).toEqual(kindsOf('sample-stdin-interrupt.jsonl'))
    expect(run.types()).toEqual(typesOf('sample-stdin-interrupt.jsonl'))
    expect(JSON.parse(run.lines[1] ?? '')).toEqual({
      type: 'control_response',
      response: { subtype: 'success', request_id: 'req_int_1', response: { still_queued: [] } },
    })
    expect(run.results()[0]).toMatchObject({ isError: true, subtype: 'error_during_execution' })
  })

  it('fake-claude - interrupt kills the running tool process group, the next turn works', async () => {
    const box = sandbox()
    const run = new Run(STREAM_FLAGS, box)
    const pidFile = path.join(box.cwd, 'pid')
    run.send(`tool: echo $$ > ${pidFile}; sleep 30`)
    await until('the tool to start', () => fs.existsSync(pidFile) && fs.readFileSync(pidFile, 'utf8').endsWith('\n'))
    const pgid = Number(fs.readFileSync(pidFile, 'utf8'))
    run.interrupt('r1')
    await run.waitForResults(1)
    expect(run.kinds()).toEqual(['init', 'thinking', 'text', 'tool_use', 'result'])
    await until('the tool group to die', () => !alive(-pgid), 5000)
    run.send('hello')
    await run.waitForResults(2)
    expect(run.results().map((r) => r.subtype)).toEqual(['error_during_execution', 'success'])
  })

  it('fake-claude - interrupt with no turn running only answers', async () => {
    const run = new Run(STREAM_FLAGS, sandbox())
    run.interrupt('r2')
    await until('the answer', () => run.lines.length > 0)
    run.child.stdin.end()
    expect(await run.exited).toEqual({ code: 0, signal: null })
    expect(run.types()).toEqual(['control_response'])
  })

  it('fake-claude - --resume continues the transcript like sample-resume-two-runs.jsonl', async () => {
    const box = sandbox()
    const id = randomUUID()
    const first = new Run([...STREAM_FLAGS, '--session-id', id], box)
    first.send('first message ALPHA')
    first.child.stdin.end()
    expect(await first.exited).toEqual({ code: 0, signal: null })
    const second = new Run([...STREAM_FLAGS, '--resume', id], box)
    second.send('recall')
    second.child.stdin.end()
    expect(await second.exited).toEqual({ code: 0, signal: null })
    expect([...first.kinds(), ...second.kinds()]).toEqual(kindsOf('sample-resume-two-runs.jsonl'))
    expect(second.texts()).toEqual(['Earlier prompts: first message ALPHA'])
    expect(second.outputs[0]).toMatchObject({ kind: 'init', cliSessionId: id })
    expect(second.results()[0]?.cumulativeCostUsd).toBe(0.002)
  })

  it('fake-claude - refuses a session id that has a transcript', async () => {
    const box = sandbox()
    const id = randomUUID()
    const first = new Run([...STREAM_FLAGS, '--session-id', id], box)
    first.send('hello')
    first.child.stdin.end()
    await first.exited
    const again = new Run([...STREAM_FLAGS, '--session-id', id], box)
    expect(await again.exited).toEqual({ code: 1, signal: null })
    expect(again.stderr).toBe(`Error: Session ID ${id} is already in use.\n`)
    expect(again.lines).toEqual([])
  })

  it('fake-claude - refuses a session id held by a live process', async () => {
    const box = sandbox()
    const id = randomUUID()
    const holder = new Run([...STREAM_FLAGS, '--session-id', id], box)
    holder.send('hello')
    await holder.waitForResults(1)
    for (const flag of ['--session-id', '--resume']) {
      const other = new Run([...STREAM_FLAGS, flag, id], box)
      expect(await other.exited).toEqual({ code: 1, signal: null })
      expect(other.stderr).toContain(`Session ID ${id} is already in use.`)
    }
    holder.child.stdin.end()
    expect(await holder.exited).toEqual({ code: 0, signal: null })
    // Once the holder is gone the session can be resumed.
    const resumed = new Run([...STREAM_FLAGS, '--resume', id], box)
    resumed.send('recall')
    await resumed.waitForResults(1)
    expect(resumed.texts()).toEqual(['Earlier prompts: hello'])
  })

  it('fake-claude - --resume of an unknown id ends in error_during_execution, exit 1', async () => {
    const run = new Run([...STREAM_FLAGS, '--resume', randomUUID()], sandbox())
    expect(await run.exited).toEqual({ code: 1, signal: null })
    expect(run.kinds()).toEqual(['init', 'result'])
    expect(run.results()[0]).toMatchObject({ isError: true, subtype: 'error_during_execution' })
  })

  it('fake-claude - SIGTERM exits 143 at once without a result, leaving the tool running', async () => {
    const box = sandbox()
    const run = new Run(STREAM_FLAGS, box)
    const pidFile = path.join(box.cwd, 'pid')
    run.send(`tool: echo $$ > ${pidFile}; sleep 30`)
    await until('the tool to start', () => fs.existsSync(pidFile) && fs.readFileSync(pidFile, 'utf8').endsWith('\n'))
    const pgid = Number(fs.readFileSync(pidFile, 'utf8'))
    cleanups.push(() => {
      try {
        process.kill(-pgid, 'SIGKILL')
      } catch {}
    })
    run.child.kill('SIGTERM')
    expect(await run.exited).toEqual({ code: 143, signal: null })
    expect(run.results()).toEqual([])
    expect(alive(-pgid)).toBe(true) // like the real CLI: the tool's group is not the CLI's
  })

  it('fake-claude - stdin EOF finishes the running turn, then exits 0', async () => {
    const run = new Run(STREAM_FLAGS, sandbox())
    run.send('sleep: 0.2')
    run.child.stdin.end()
    expect(await run.exited).toEqual({ code: 0, signal: null })
    expect(run.results()).toHaveLength(1)
  })

  it('fake-claude - crash exits 3 mid-turn without a result', async () => {
    const run = new Run(STREAM_FLAGS, sandbox())
    run.send('crash')
    expect(await run.exited).toEqual({ code: 3, signal: null })
    expect(run.kinds()).toEqual(['init', 'text'])
    expect(run.stderr).not.toBe('')
  })

  it('fake-claude - noise prints lines the parser skips or reports', async () => {
    const run = new Run(STREAM_FLAGS, sandbox())
    run.send('noise')
    await run.waitForResults(1)
    expect(run.kinds()).toEqual(['init', 'noise', 'text', 'result'])
    expect(run.types()).toEqual(['system', '-', 'fake_unknown_type', 'system', 'assistant', 'result'])
    expect(run.texts()).toEqual(['Echo: noise'])
  })

  it('fake-claude - burst prints N text lines', async () => {
    const run = new Run(STREAM_FLAGS, sandbox())
    run.send('burst: 5000')
    await run.waitForResults(1)
    const texts = run.texts()
    expect(texts).toHaveLength(5000)
    expect([texts[0], texts[4999]]).toEqual(['part 1', 'part 5000'])
    expect(run.kinds().slice(-1)).toEqual(['result'])
  })

  it('fake-claude - big prints one 10 MB text block', async () => {
    const run = new Run(STREAM_FLAGS, sandbox())
    run.send('big: 10485760')
    await run.waitForResults(1)
    expect(run.dropped).toEqual([])
    expect(run.texts().map((t) => t.length)).toEqual([10_485_760])
  })

  it('fake-claude - system? answers with --append-system-prompt', async () => {
    const box = sandbox()
    const withPrompt = new Run([...STREAM_FLAGS, '--append-system-prompt', 'Be brief.'], box)
    const without = new Run(STREAM_FLAGS, box)
    for (const run of [withPrompt, without]) {
      run.send('system?')
      await run.waitForResults(1)
    }
    expect(withPrompt.texts()).toEqual(['System: Be brief.'])
    expect(without.texts()).toEqual(['System: (none)'])
  })

  it('fake-claude - accepts the real flags, prompt as text blocks', async () => {
    const run = new Run(
      [
        ...STREAM_FLAGS,
        '--session-id',
        randomUUID(),
        '--permission-mode',
        'acceptEdits',
        '--allowedTools',
        'Bash',
        'Read',
        '--disallowedTools',
        'Write,Edit',
        '--model',
        'claude-fake-2',
        '--settings',
        '{}',
        '--include-partial-messages',
      ],
      sandbox(),
    )
    run.child.stdin.write(
      JSON.stringify({
        type: 'user',
        message: {
          role: 'user',
          content: [
            { type: 'text', text: 'a' },
            { type: 'text', text: 'b' },
          ],
        },
      }) + '\n',
    )
    await run.waitForResults(1)
    expect(run.outputs[0]).toMatchObject({ kind: 'init', model: 'claude-fake-2' })
    expect(JSON.parse(run.lines[0] ?? '')).toMatchObject({ permissionMode: 'acceptEdits' })
    expect(run.texts()).toEqual(['Echo: a\nb'])
  })

  it('fake-claude - FAKE_CLAUDE_START_DELAY_MS delays the first output', async () => {
    const started = Date.now()
    const run = new Run(STREAM_FLAGS, sandbox(), { FAKE_CLAUDE_START_DELAY_MS: '300' })
    let firstLineAt = 0
    run.child.stdout.once('data', () => (firstLineAt = Date.now()))
    run.send('hello')
    await run.waitForResults(1)
    expect(firstLineAt - started).toBeGreaterThanOrEqual(300)
  })
})
