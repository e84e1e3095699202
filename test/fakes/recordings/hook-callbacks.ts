/**
 * Scenarios of Claude Code's in-process PreToolUse hooks (stream-json control
 * protocol), run against a CLI as a host would drive it: `initialize` with one
 * PreToolUse callback, one prompt that makes the model run `touch <canary>`
 * with Bash, and one kind of answer to the `hook_callback` request. Recorded
 * from the real CLI by record-hook-callbacks.ts into
 * claude-2.1.330-hook-callbacks.json; the fake CLI is checked against that
 * recording (test/fakes/fake-claude-control.test.ts).
 */
import { spawn } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'

export const RECORDING = new URL('./claude-2.1.330-hook-callbacks.json', import.meta.url)

/** How the host answers the hook_callback. */
export type HookAnswerKind = 'empty' | 'allow' | 'deny' | 'block' | 'error' | 'not-object' | 'bad-decision' | 'none' | 'wrong-id' | 'eof' | 'garbage'

export interface HookScenario {
  name: string
  answer: HookAnswerKind
  /** The hook's `onFailure` in the initialize request; the runner always sends "block". */
  onFailure: 'block' | 'unset'
  /** The hook's `timeout` in seconds. */
  timeout: number
  /** The sandbox's `.claude/settings.json` says `disableAllHooks: true`. */
  projectDisablesHooks?: boolean
}

export const HOOK_SCENARIOS: readonly HookScenario[] = [
  { name: 'allow: empty answer (no objection)', answer: 'empty', onFailure: 'block', timeout: 10 },
  { name: 'allow: permissionDecision allow', answer: 'allow', onFailure: 'block', timeout: 10 },
  { name: 'deny: permissionDecision deny with a reason', answer: 'deny', onFailure: 'block', timeout: 10 },
  { name: 'deny: legacy decision block with a reason', answer: 'block', onFailure: 'block', timeout: 10 },
  { name: 'error answer, onFailure block', answer: 'error', onFailure: 'block', timeout: 10 },
  { name: 'error answer, onFailure unset', answer: 'error', onFailure: 'unset', timeout: 10 },
  { name: 'answer is not an object, onFailure block', answer: 'not-object', onFailure: 'block', timeout: 10 },
  { name: 'answer is not an object, onFailure unset', answer: 'not-object', onFailure: 'unset', timeout: 10 },
  { name: 'unknown permissionDecision, onFailure block', answer: 'bad-decision', onFailure: 'block', timeout: 10 },
  { name: 'no answer within the timeout', answer: 'none', onFailure: 'block', timeout: 1 },
  { name: 'an answer to another request id only', answer: 'wrong-id', onFailure: 'block', timeout: 1 },
  { name: 'stdin closed while the call waits', answer: 'eof', onFailure: 'block', timeout: 10 },
  { name: 'a non-JSON line instead of an answer', answer: 'garbage', onFailure: 'block', timeout: 10 },
  { name: 'deny while the project settings disable all hooks', answer: 'deny', onFailure: 'block', timeout: 10, projectDisablesHooks: true },
]

export const DENY_REASON = 'WAF says no'

/** What one scenario showed, without ids, times and paths. */
export interface HookOutcome {
  scenario: string
  /** Whether the Bash command ran. */
  canaryRan: boolean
  exitCode: number | null
  /** The initialize answer: subtype and whether the CLI applied the hooks. */
  initialize?: { subtype: string; hooks_applied?: unknown }
  /** The hook_callback request: its keys, callback id, and the keys of its input. */
  hookCallback?: { requestKeys: string[]; callbackId: unknown; inputKeys: string[]; hookEventName: unknown; toolName: unknown; toolUseIdMatches: boolean }
  /** Whether the CLI wrote control_cancel_request for it. */
  cancelled: boolean
  /** The `system/informational` warning about the hook, if any. */
  informational?: string
  /** The tool_result the agent got. */
  toolResult?: { content: string; is_error: boolean }
  /** How many calls the result line lists in permission_denials. */
  permissionDenials?: number
}

export interface HookRun {
  outcome: HookOutcome
  /** The protocol lines both ways, paths and ids as they were (the recorder rewrites them). */
  transcript: { dir: 'stdin' | 'stdout'; line: unknown }[]
}

export interface CliUnderTest {
  command: string
  args: string[]
  env: Record<string, string>
  /** The prompt that makes this CLI run `command` with its Bash tool. */
  prompt(command: string): string
}

function answerFor(kind: HookAnswerKind, requestId: string): string | undefined {
  const success = (response: unknown, id = requestId) =>
    JSON.stringify({ type: 'control_response', response: { subtype: 'success', request_id: id, response } })
  switch (kind) {
    case 'empty':
      return success({})
    case 'allow':
      return success({ hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'allow' } })
    case 'deny':
      return success({ hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'deny', permissionDecisionReason: DENY_REASON } })
    case 'block':
      return success({ decision: 'block', reason: DENY_REASON })
    case 'error':
      return JSON.stringify({ type: 'control_response', response: { subtype: 'error', request_id: requestId, error: 'the host failed' } })
    case 'not-object':
      return success('garbage')
    case 'bad-decision':
      return success({ hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'maybe' } })
    case 'wrong-id':
      return success({}, 'not-a-request-id')
    case 'garbage':
      return 'this is not json {'
    case 'none':
    case 'eof':
      return undefined
  }
}

/** Runs one scenario against a CLI; resolves when it exited (killed after `killAfterMs`). */
export async function runHookScenario(cli: CliUnderTest, scenario: HookScenario, killAfterMs = 60_000): Promise<HookRun> {
  const work = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'hook-scenario-')))
  try {
    const canary = path.join(work, 'canary')
    if (scenario.projectDisablesHooks) {
      fs.mkdirSync(path.join(work, '.claude'))
      fs.writeFileSync(path.join(work, '.claude', 'settings.json'), JSON.stringify({ disableAllHooks: true }))
    }
    const args = [...cli.args, '-p', '--input-format', 'stream-json', '--output-format', 'stream-json', '--verbose', '--permission-mode', 'bypassPermissions']
    const child = spawn(cli.command, args, { cwd: work, env: cli.env, stdio: ['pipe', 'pipe', 'pipe'] })
    const transcript: HookRun['transcript'] = []
    const outcome: HookOutcome = { scenario: scenario.name, canaryRan: false, exitCode: null, cancelled: false }
    const parse = (line: string): unknown => {
      try {
        return JSON.parse(line)
      } catch {
        return line
      }
    }
    const send = (line: string) => {
      if (child.stdin.writableEnded) return
      transcript.push({ dir: 'stdin', line: parse(line) })
      child.stdin.write(line + '\n')
    }
    child.stdin.on('error', () => {})
    child.stderr.resume()
    let callbackId: string | undefined
    let buffer = ''
    const onLine = (line: string) => {
      const msg = parse(line) as Record<string, any>
      if (typeof msg !== 'object' || msg === null) return
      if (msg.type === 'control_response' && msg.response?.request_id === 'init_1') {
        outcome.initialize = { subtype: msg.response.subtype, hooks_applied: msg.response.response?.hooks_applied }
        transcript.push({
          dir: 'stdout',
          line: { ...msg, response: { ...msg.response, response: { hooks_applied: msg.response.response?.hooks_applied, '…': 'other fields left out' } } },
        })
      } else if (msg.type === 'control_request' && msg.request?.subtype === 'hook_callback') {
        transcript.push({ dir: 'stdout', line: msg })
        callbackId = msg.request_id
        const input = msg.request.input ?? {}
        outcome.hookCallback = {
          requestKeys: Object.keys(msg.request).sort(),
          callbackId: msg.request.callback_id,
          inputKeys: Object.keys(input).sort(),
          hookEventName: input.hook_event_name,
          toolName: input.tool_name,
          toolUseIdMatches: typeof input.tool_use_id === 'string' && input.tool_use_id === msg.request.tool_use_id,
        }
        if (scenario.answer === 'eof') child.stdin.end()
        const answer = answerFor(scenario.answer, msg.request_id)
        if (answer !== undefined) send(answer)
      } else if (msg.type === 'control_cancel_request') {
        transcript.push({ dir: 'stdout', line: msg })
        outcome.cancelled = msg.request_id === callbackId
      } else if (msg.type === 'system' && msg.subtype === 'informational') {
        transcript.push({ dir: 'stdout', line: msg })
        outcome.informational = msg.content
      } else if (msg.type === 'user' && Array.isArray(msg.message?.content)) {
        const block = msg.message.content.find((b: { type?: string }) => b.type === 'tool_result')
        if (block) {
          transcript.push({ dir: 'stdout', line: msg })
          outcome.toolResult = { content: typeof block.content === 'string' ? block.content : JSON.stringify(block.content), is_error: block.is_error === true }
        }
      } else if (msg.type === 'result') {
        transcript.push({
          dir: 'stdout',
          line: { type: 'result', subtype: msg.subtype, is_error: msg.is_error, permission_denials: msg.permission_denials, '…': 'other fields left out' },
        })
        outcome.permissionDenials = Array.isArray(msg.permission_denials) ? msg.permission_denials.length : undefined
        child.stdin.end()
      }
    }
    child.stdout.setEncoding('utf8').on('data', (text: string) => {
      buffer += text
      for (let end = buffer.indexOf('\n'); end >= 0; end = buffer.indexOf('\n')) {
        onLine(buffer.slice(0, end))
        buffer = buffer.slice(end + 1)
      }
    })
    const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)))
    const hook = { matcher: '*', hookCallbackIds: ['waf_0'], timeout: scenario.timeout, ...(scenario.onFailure === 'block' && { onFailure: 'block' }) }
    send(JSON.stringify({ type: 'control_request', request_id: 'init_1', request: { subtype: 'initialize', hooks: { PreToolUse: [hook] } } }))
    send(JSON.stringify({ type: 'user', message: { role: 'user', content: cli.prompt(`touch ${canary}`) } }))
    const kill = setTimeout(() => child.kill('SIGKILL'), killAfterMs)
    outcome.exitCode = await exited
    clearTimeout(kill)
    outcome.canaryRan = fs.existsSync(canary)
    return { outcome, transcript }
  } finally {
    fs.rmSync(work, { recursive: true, force: true })
  }
}
