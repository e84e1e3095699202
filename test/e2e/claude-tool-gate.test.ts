import { chmodSync, existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ClaudeEngine } from '../../runner/engine/claude/engine.ts'
import type { EngineOutput } from '../../runner/engine/engine.ts'
import type { ToolGate } from '../../waf/mod.ts'
import { startFakeAnthropic, type FakeAnthropic } from '../fakes/anthropic-api.ts'
import { claudeBin, claudeEnv } from '../fixtures/claude-env.ts'

/**
 * The engine's tool gate with the REAL Claude Code CLI (fake model API): the
 * runner answers the CLI's hook_callback requests in-process; a denied tool
 * never runs, an allowed one does, and a gate that never answers (or fails)
 * keeps the tool from running.
 */
const engine = new ClaudeEngine({
  command: claudeBin,
  args: [],
  permission_mode: 'bypassPermissions',
  allowed_tools: [],
  disallowed_tools: [],
  maxLineBytes: 16 * 1024 * 1024,
})

describe('claude engine - tool gate with the real CLI', () => {
  let api: FakeAnthropic
  const roots: string[] = []
  beforeAll(async () => {
    api = await startFakeAnthropic()
  })
  afterAll(async () => {
    await api?.stop()
    for (const root of roots) rmSync(root, { recursive: true, force: true })
  })

  /** One `touch <canary>` turn through the gate: what the agent got, whether it ran, what the gate was asked. */
  async function turn(gate: ToolGate) {
    const root = mkdtempSync(path.join(os.tmpdir(), 'tool-gate-'))
    roots.push(root)
    const env = claudeEnv({ baseUrl: api.url, home: root })
    const canary = path.join(root, 'canary')
    const outputs: EngineOutput[] = []
    const { promise: resulted, resolve } = Promise.withResolvers<void>()
    const cli = await engine.start(
      { cwd: root, cliSessionId: crypto.randomUUID(), resume: false, env: env.env, toolGate: gate },
      {
        onOutput: (output) => {
          outputs.push(output)
          if (output.kind === 'result') resolve()
        },
        onOverlong: () => {},
        onStderr: () => {},
      },
    )
    cli.send(`run: touch ${canary}`)
    await resulted
    cli.endInput()
    await cli.exited
    const toolUse = outputs.find((o) => o.kind === 'tool_use')
    const toolResult = outputs.find((o) => o.kind === 'tool_result')
    return { ran: existsSync(canary), toolUse, toolResult }
  }

  it('gate - an allowed call runs; the gate saw the call as the model wrote it', async () => {
    const asked: unknown[] = []
    const out = await turn({
      check: (call) => {
        asked.push(call)
        return { decision: 'allow' }
      },
      timeoutSeconds: 10,
    })
    expect(out.ran).toBe(true)
    expect(out.toolResult).toMatchObject({ isError: false })
    expect(asked).toEqual([
      {
        toolName: 'Bash',
        input: { command: expect.stringMatching(/^touch .*canary$/), description: 'Run command' },
        toolUseId: (out.toolUse as { id: string }).id,
        cwd: expect.any(String),
      },
    ])
  })

  it('gate - a denied call never runs; the agent reads the reason', async () => {
    const out = await turn({ check: () => ({ decision: 'deny', reason: 'blocked by WAF rule test.no' }), timeoutSeconds: 10 })
    expect(out.ran).toBe(false)
    expect(out.toolResult).toMatchObject({ isError: true, content: 'PreToolUse:Bash hook error: blocked by WAF rule test.no' })
  })

  it('gate - fail closed: an answer that never comes denies after the timeout', async () => {
    const out = await turn({ check: () => new Promise(() => {}), timeoutSeconds: 1 })
    expect(out.ran).toBe(false)
    expect(out.toolResult).toMatchObject({ isError: true, content: expect.stringMatching(/^PreToolUse hook did not respond before its timeout/) })
  })

  it('gate - fail closed: a gate that throws, or answers garbage, denies', async () => {
    const threw = await turn({
      check: () => {
        throw new Error('rules broke')
      },
      timeoutSeconds: 10,
    })
    expect(threw.ran).toBe(false)
    expect(threw.toolResult).toMatchObject({
      isError: true,
      content: expect.stringContaining('could not check this tool call, so it was not run: the check failed (rules broke)'),
    })
    const garbage = await turn({ check: () => ({ decision: 'yes please' }) as never, timeoutSeconds: 10 })
    expect(garbage.ran).toBe(false)
    expect(garbage.toolResult).toMatchObject({ isError: true, content: expect.stringContaining('could not check this tool call') })
  })

  it('gate - a CLI that does not take the hook is stopped before it reads a prompt', async () => {
    const root = mkdtempSync(path.join(os.tmpdir(), 'tool-gate-'))
    roots.push(root)
    const canary = path.join(root, 'prompt-read')
    // A CLI that refuses initialize and would record any prompt it reads.
    const script = path.join(root, 'refusing-cli.sh')
    writeFileSync(
      script,
      `#!/bin/sh\nwhile IFS= read -r line; do case "$line" in *initialize*) echo '{"type":"control_response","response":{"subtype":"error","request_id":"agent_runtime_init","error":"no hooks here"}}' ;; *'"user"'*) touch ${canary} ;; esac; done\n`,
    )
    chmodSync(script, 0o755)
    const refusing = new ClaudeEngine({ command: script, args: [], permission_mode: 'default', allowed_tools: [], disallowed_tools: [], maxLineBytes: 1024 })
    const stderr: string[] = []
    const cli = await refusing.start(
      {
        cwd: root,
        cliSessionId: crypto.randomUUID(),
        resume: false,
        env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
        toolGate: { check: () => ({ decision: 'allow' }), timeoutSeconds: 10 },
      },
      { onOutput: () => {}, onOverlong: () => {}, onStderr: (line) => stderr.push(line) },
    )
    cli.send('hello')
    const exit = await cli.exited
    expect(exit.signal ?? exit.code).toBeTruthy()
    expect(stderr).toContainEqual(expect.stringContaining("refused the runner's tool hook (no hooks here)"))
    expect(existsSync(canary)).toBe(false)
  })
})
