/**
 * Scenarios of Claude Code's permission prompts over the stream-json control
 * protocol (`--permission-mode default --permission-prompt-tool stdio`), run
 * as the runner drives the CLI: `initialize` with the WAF's PreToolUse hook
 * (answered with no objection), then prompts whose tool calls the CLI asks
 * about with `can_use_tool` requests, answered one way per scenario. Recorded
 * from the real CLI by record-permission-prompts.ts into
 * claude-2.1.330-permission-prompts.json; the engine's mapping
 * (runner/engine/claude/control.ts) and its tests follow that recording.
 */
import { spawn } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'

export const PERMISSION_RECORDING = new URL('./claude-2.1.330-permission-prompts.json', import.meta.url)

export type PromptAnswer = 'allow' | 'allow-edited' | 'deny' | 'answer' | 'reject' | 'interrupt'

export interface PromptScenario {
  name: string
  /** `touch` makes the model run `touch <canary>`; `ask` makes it call AskUserQuestion. */
  prompt: 'touch' | 'ask'
  answer: PromptAnswer
  /** Send the same prompt again after the first result (is an allowed call asked again?). */
  twice?: boolean
}

export const PROMPT_SCENARIOS: readonly PromptScenario[] = [
  { name: 'allow once', prompt: 'touch', answer: 'allow' },
  { name: 'allow with an edited input', prompt: 'touch', answer: 'allow-edited' },
  { name: 'deny with a message', prompt: 'touch', answer: 'deny' },
  { name: 'allowed once is asked again next turn', prompt: 'touch', answer: 'allow', twice: true },
  { name: 'question answered', prompt: 'ask', answer: 'answer' },
  { name: 'question rejected', prompt: 'ask', answer: 'reject' },
  { name: 'interrupt while the request waits', prompt: 'touch', answer: 'interrupt' },
]

export const DENY_MESSAGE = 'The user denied this tool call: not now'
export const QUESTION = 'Which colour? | Red | Blue'

export interface PromptOutcome {
  scenario: string
  canaryRan: boolean
  /** The edited command's canary (allow-edited only). */
  editedRan?: boolean
  exitCode: number | null
  /** Control requests in the order the CLI wrote them (hook_callback, can_use_tool). */
  requests: string[]
  /** The keys of the first can_use_tool request and of its suggestions. */
  canUseTool?: { keys: string[]; toolName: unknown; suggestionTypes: unknown[]; requiresUserInteraction?: unknown }
  cancelled: boolean
  toolResults: { content: string; is_error: boolean }[]
  /** The last message the model received (what it saw of the answer). */
  modelSaw?: string
}

export interface PromptRun {
  outcome: PromptOutcome
  transcript: { dir: 'stdin' | 'stdout'; line: unknown }[]
}

/** Runs one scenario against the CLI; resolves when it exited (killed after `killAfterMs`). */
export async function runPromptScenario(
  cli: { command: string; env: Record<string, string> },
  scenario: PromptScenario,
  killAfterMs = 60_000,
): Promise<PromptRun> {
  const work = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'prompt-scenario-')))
  try {
    const canary = path.join(work, 'canary')
    const edited = path.join(work, 'edited')
    const args = [
      '-p',
      '--input-format',
      'stream-json',
      '--output-format',
      'stream-json',
      '--verbose',
      '--permission-mode',
      'default',
      '--permission-prompt-tool',
      'stdio',
    ]
    const child = spawn(cli.command, args, { cwd: work, env: cli.env, stdio: ['pipe', 'pipe', 'pipe'] })
    const transcript: PromptRun['transcript'] = []
    const outcome: PromptOutcome = { scenario: scenario.name, canaryRan: false, exitCode: null, requests: [], cancelled: false, toolResults: [] }
    const send = (value: unknown) => {
      if (child.stdin.writableEnded) return
      transcript.push({ dir: 'stdin', line: value })
      child.stdin.write(JSON.stringify(value) + '\n')
    }
    const success = (requestId: string, response: unknown) =>
      send({ type: 'control_response', response: { subtype: 'success', request_id: requestId, response } })
    const prompt = scenario.prompt === 'ask' ? `ask: ${QUESTION}` : `run: touch ${canary}`
    let results = 0
    let pendingId: string | undefined
    child.stdin.on('error', () => {})
    child.stderr.resume()
    const onLine = (line: string) => {
      let msg: Record<string, any>
      try {
        msg = JSON.parse(line)
      } catch {
        return
      }
      if (msg.type === 'control_request' && msg.request?.subtype === 'hook_callback') {
        outcome.requests.push('hook_callback')
        transcript.push({
          dir: 'stdout',
          line: { ...msg, request: { ...msg.request, input: { tool_name: msg.request.input?.tool_name, '…': 'other fields left out' } } },
        })
        success(msg.request_id, {})
      } else if (msg.type === 'control_request' && msg.request?.subtype === 'can_use_tool') {
        outcome.requests.push('can_use_tool')
        transcript.push({ dir: 'stdout', line: msg })
        const request = msg.request
        outcome.canUseTool ??= {
          keys: Object.keys(request).sort(),
          toolName: request.tool_name,
          suggestionTypes: Array.isArray(request.permission_suggestions) ? request.permission_suggestions.map((s: { type?: unknown }) => s.type) : [],
          requiresUserInteraction: request.requires_user_interaction,
        }
        pendingId = msg.request_id
        switch (scenario.answer) {
          case 'allow':
            return success(msg.request_id, { behavior: 'allow', updatedInput: request.input })
          case 'allow-edited':
            return success(msg.request_id, { behavior: 'allow', updatedInput: { ...request.input, command: `touch ${edited}` } })
          case 'deny':
          case 'reject':
            return success(msg.request_id, { behavior: 'deny', message: DENY_MESSAGE })
          case 'answer': {
            const question = request.input.questions[0]
            return success(msg.request_id, {
              behavior: 'allow',
              updatedInput: { ...request.input, answers: { [question.question]: question.options[1].label } },
            })
          }
          case 'interrupt':
            return send({ type: 'control_request', request_id: 'interrupt_1', request: { subtype: 'interrupt' } })
        }
      } else if (msg.type === 'control_cancel_request') {
        transcript.push({ dir: 'stdout', line: msg })
        outcome.cancelled = msg.request_id === pendingId
      } else if (msg.type === 'user' && Array.isArray(msg.message?.content)) {
        const block = msg.message.content.find((b: { type?: string }) => b.type === 'tool_result')
        if (!block) return
        transcript.push({ dir: 'stdout', line: { type: 'user', message: { role: 'user', content: [block] }, '…': 'other fields left out' } })
        outcome.toolResults.push({
          content: typeof block.content === 'string' ? block.content : JSON.stringify(block.content),
          is_error: block.is_error === true,
        })
      } else if (msg.type === 'result') {
        transcript.push({
          dir: 'stdout',
          line: { type: 'result', subtype: msg.subtype, is_error: msg.is_error, permission_denials: msg.permission_denials, '…': 'other fields left out' },
        })
        results++
        if (scenario.twice && results === 1) send({ type: 'user', message: { role: 'user', content: prompt } })
        else child.stdin.end()
      }
    }
    let buffer = ''
    child.stdout.setEncoding('utf8').on('data', (text: string) => {
      buffer += text
      for (let end = buffer.indexOf('\n'); end >= 0; end = buffer.indexOf('\n')) {
        onLine(buffer.slice(0, end))
        buffer = buffer.slice(end + 1)
      }
    })
    const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)))
    send({
      type: 'control_request',
      request_id: 'init_1',
      request: { subtype: 'initialize', hooks: { PreToolUse: [{ matcher: '*', hookCallbackIds: ['waf_0'], timeout: 10, onFailure: 'block' }] } },
    })
    send({ type: 'user', message: { role: 'user', content: prompt } })
    const kill = setTimeout(() => child.kill('SIGKILL'), killAfterMs)
    outcome.exitCode = await exited
    clearTimeout(kill)
    outcome.canaryRan = fs.existsSync(canary)
    if (scenario.answer === 'allow-edited') outcome.editedRan = fs.existsSync(edited)
    return { outcome, transcript }
  } finally {
    fs.rmSync(work, { recursive: true, force: true })
  }
}
