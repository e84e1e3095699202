#!/usr/bin/env node
/**
 * A fake of the Claude Code CLI (2.1.330) for fast tests: same flags, same
 * stream-json line shapes and field names as the recordings in
 * test/fixtures/claude-code/, no model API. The prompt text steers each turn:
 *
 *   tool: <command>   thinking, text, Bash tool_use, really runs the command, tool_result, text
 *   sleep: <seconds>  Bash tool_use `sleep <seconds>`, really run, tool_result
 *   burst: <N>        N assistant text lines `part <i>`, written in ~64 KB chunks
 *   stamped: <N> <R>  N text lines `t=<epoch ms, µs precision>` written one by one at R lines/s (relay latency benchmarks)
 *   fail              API error 500 (synthetic assistant text, result is_error)
 *   crash             exits with code 3 mid-turn, no result line
 *   noise             a non-JSON line, an unknown-type line, system/status, then an echo
 *   big: <N>          one text block of N bytes
 *   recall            `Earlier prompts: p1 | p2` from the stored transcript
 *   system?           `System: <--append-system-prompt or (none)>`
 *   anything else     `Echo: <prompt>`
 *
 * In-process PreToolUse hooks over the stream-json control protocol, as the
 * real CLI 2.1.330 serves them (test/fakes/recordings/claude-2.1.330-hook-callbacks.json):
 * a stdin `control_request` `initialize` registers `{matcher, hookCallbackIds,
 * timeout, onFailure}`; before each matching tool call the fake writes a
 * `control_request` `hook_callback` and waits for the `control_response`. A
 * `permissionDecision: "deny"` (or `decision: "block"`) denies with its reason;
 * no answer within `timeout` denies (after a `control_cancel_request`); an
 * error or malformed answer denies only with `onFailure: "block"`; stdin
 * closing while a call waits denies it. A non-JSON stdin line ends the fake
 * with exit 1. A denial is a failed tool_result, listed in the result's
 * permission_denials when a hook decided it.
 *
 * Tool commands run as `/bin/bash -c` in a process group of their own, like
 * the real CLI, and are left running when the fake gets SIGTERM (exit 143).
 * Transcripts: `$CLAUDE_CONFIG_DIR/fake-projects/<uuid>.jsonl` (default
 * `$HOME/.claude`), one line per prompt, plus `<uuid>.lock` while a process
 * holds the session. Env `FAKE_CLAUDE_START_DELAY_MS` delays the first output
 * (the real CLI takes ~0.5 s to start); `FAKE_CLAUDE_MODEL_DELAY_MS` delays each
 * turn between its init line and its first answer (a slow model: room to interrupt).
 *
 * With `--include-partial-messages`, each model message is also told as the
 * real CLI 2.1.330 tells it (sample-stream-partial-messages.jsonl): `stream_event`
 * lines message_start, then per block content_block_start, its deltas
 * (thinking_delta + signature_delta, text_delta, input_json_delta), the block's
 * `assistant` line, content_block_stop; then message_delta and message_stop.
 * `burst:` and `stamped:` stay whole lines (they measure the relay per line).
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { randomBytes, randomUUID } from 'node:crypto'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import readline from 'node:readline'

const VERSION = '2.1.330'
const DEFAULT_MODEL = 'claude-fake-1'
const COST_PER_TURN_USD = 0.001
/** Tokens of one fake API call (as the recordings' fake model server reports). */
const CALL_INPUT_TOKENS = 12
const CALL_OUTPUT_TOKENS = 42
const WRITE_CHUNK_CHARS = 64 * 1024
const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i
const TOOLS = ['Task', 'Bash', 'Edit', 'Read', 'Write', 'WebFetch', 'WebSearch']

interface Args {
  version: boolean
  sessionId?: string
  resume?: string
  appendSystemPrompt?: string
  permissionMode: string
  model: string
  inputFormat: string
  /** `--include-partial-messages`: stream_event lines around every block. */
  partial: boolean
  /** `--permission-prompt-tool stdio`: in an asking mode, a Bash call is asked about on the control protocol (can_use_tool). */
  promptTool?: string
  prompt?: string
}

const VALUE_FLAGS = new Set([
  '--input-format',
  '--output-format',
  '--session-id',
  '--resume',
  '-r',
  '--append-system-prompt',
  '--system-prompt',
  '--permission-mode',
  '--model',
  '--settings',
  '--max-turns',
  '--fallback-model',
  '--setting-sources',
  '--agent',
  '--agents',
  '--effort',
  '--name',
  '-n',
  '--permission-prompt-tool',
])
const VARIADIC_FLAGS = new Set([
  '--allowedTools',
  '--allowed-tools',
  '--disallowedTools',
  '--disallowed-tools',
  '--tools',
  '--mcp-config',
  '--add-dir',
  '--betas',
])

function parseArgs(argv: string[]): Args {
  const args: Args = { version: false, permissionMode: 'default', model: DEFAULT_MODEL, inputFormat: 'text', partial: false }
  const values = new Map<string, string>()
  const positional: string[] = []
  for (let i = 0; i < argv.length; i++) {
    const raw = argv[i] ?? ''
    const eq = raw.startsWith('--') ? raw.indexOf('=') : -1
    const flag = eq > 0 ? raw.slice(0, eq) : raw
    if (flag === '--version' || flag === '-v') args.version = true
    else if (flag === '--include-partial-messages') args.partial = true
    else if (VALUE_FLAGS.has(flag)) values.set(flag, eq > 0 ? raw.slice(eq + 1) : (argv[++i] ?? ''))
    else if (VARIADIC_FLAGS.has(flag)) {
      // Variadic like the real CLI: swallows every following non-flag argument.
      if (eq < 0) while (i + 1 < argv.length && !(argv[i + 1] ?? '').startsWith('-')) i++
    } else if (!raw.startsWith('-')) positional.push(raw)
    // Other flags (-p, --verbose, …) need no value.
  }
  const get = (...names: string[]) => names.map((n) => values.get(n)).find((v) => v !== undefined)
  args.sessionId = get('--session-id')
  args.resume = get('--resume', '-r')
  args.appendSystemPrompt = get('--append-system-prompt')
  args.permissionMode = get('--permission-mode') ?? args.permissionMode
  args.model = get('--model') ?? args.model
  args.inputFormat = get('--input-format') ?? args.inputFormat
  args.promptTool = get('--permission-prompt-tool')
  if (positional.length > 0) args.prompt = positional.join(' ')
  return args
}

const args = parseArgs(process.argv.slice(2))
if (args.version) {
  process.stdout.write(`${VERSION} (Claude Code)\n`)
  process.exit(0)
}

process.on('SIGTERM', () => process.exit(143))
process.on('SIGINT', () => process.exit(130))
process.stdout.on('error', () => process.exit(1))

// ---- session store ---------------------------------------------------------

interface Entry {
  type: 'user'
  prompt: string
  timestamp: string
  costUsd: number
  inputTokens: number
  outputTokens: number
}

const configDir = process.env.CLAUDE_CONFIG_DIR || path.join(process.env.HOME || os.homedir(), '.claude')
const storeDir = path.join(configDir, 'fake-projects')
const sessionId = args.resume ?? args.sessionId ?? randomUUID()
const transcriptPath = path.join(storeDir, `${sessionId}.jsonl`)
const lockPath = path.join(storeDir, `${sessionId}.lock`)

function refuse(message: string): never {
  process.stderr.write(`Error: ${message}\n`)
  process.exit(1)
}

function pidAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false
  try {
    process.kill(pid, 0)
    return true
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM'
  }
}

/** One live process per session id, like the real CLI. */
function takeLock(): void {
  fs.mkdirSync(storeDir, { recursive: true })
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      fs.writeFileSync(lockPath, String(process.pid), { flag: 'wx' })
      process.on('exit', () => {
        try {
          if (fs.readFileSync(lockPath, 'utf8') === String(process.pid)) fs.unlinkSync(lockPath)
        } catch {}
      })
      return
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err
      let holder = 0
      try {
        holder = Number(fs.readFileSync(lockPath, 'utf8'))
      } catch {}
      // In a PID namespace a stale lock can name our own pid (every sandboxed CLI is pid 2 there).
      if (holder !== process.pid && pidAlive(holder)) refuse(`Session ID ${sessionId} is already in use.`)
      fs.rmSync(lockPath, { force: true })
    }
  }
  refuse(`Session ID ${sessionId} is already in use.`)
}

function loadTranscript(): Entry[] | undefined {
  let text: string
  try {
    text = fs.readFileSync(transcriptPath, 'utf8')
  } catch {
    return undefined
  }
  const entries: Entry[] = []
  for (const line of text.split('\n')) {
    try {
      if (line.trim() !== '') entries.push(JSON.parse(line) as Entry)
    } catch {}
  }
  return entries
}

function saveTranscript(): void {
  const tmp = `${transcriptPath}.${process.pid}.tmp`
  fs.writeFileSync(tmp, entries.map((e) => JSON.stringify(e) + '\n').join(''))
  fs.renameSync(tmp, transcriptPath)
}

if (args.resume === undefined && args.sessionId !== undefined && !UUID_RE.test(args.sessionId)) {
  refuse('Invalid session ID. Must be a valid UUID.')
}
takeLock()
const stored = loadTranscript()
if (args.resume === undefined && args.sessionId !== undefined && stored !== undefined) {
  refuse(`Session ID ${sessionId} is already in use.`)
}
const entries: Entry[] = stored ?? []

// ---- output ----------------------------------------------------------------

const startDelayMs = Math.max(0, Number(process.env.FAKE_CLAUDE_START_DELAY_MS ?? 0) || 0)
const modelDelayMs = Math.max(0, Number(process.env.FAKE_CLAUDE_MODEL_DELAY_MS ?? 0) || 0)
const ready = new Promise<void>((resolve) => setTimeout(resolve, startDelayMs))
let messageCounter = 0

function write(text: string): Promise<void> {
  return new Promise((resolve) => {
    if (process.stdout.write(text)) resolve()
    else process.stdout.once('drain', resolve)
  })
}

function emit(line: object): void {
  process.stdout.write(JSON.stringify(line) + '\n')
}

function newMessageId(): string {
  return `msg_fake_${Date.now()}_${++messageCounter}`
}

function initLine(): object {
  return {
    type: 'system',
    subtype: 'init',
    cwd: process.cwd(),
    session_id: sessionId,
    tools: TOOLS,
    mcp_servers: [],
    model: args.model,
    permissionMode: args.permissionMode,
    slash_commands: [],
    apiKeySource: 'none',
    claude_code_version: VERSION,
    output_style: 'default',
    agents: [],
    skills: [],
    plugins: [],
    uuid: randomUUID(),
    fast_mode_state: 'off',
  }
}

function assistantLine(messageId: string, block: object, model = args.model): object {
  return {
    type: 'assistant',
    message: {
      id: messageId,
      type: 'message',
      role: 'assistant',
      model,
      content: [block],
      stop_reason: null,
      stop_sequence: null,
      usage: { input_tokens: CALL_INPUT_TOKENS, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: 1 },
      context_management: null,
    },
    parent_tool_use_id: null,
    session_id: sessionId,
    uuid: randomUUID(),
    timestamp: new Date().toISOString(),
    request_id: `req_fake_${Date.now()}`,
  }
}

/** One line of `--include-partial-messages` output: an API stream event of one message. */
function streamLine(messageId: string, event: object, thinking = false): object {
  return {
    type: 'stream_event',
    event,
    session_id: sessionId,
    parent_tool_use_id: null,
    uuid: randomUUID(),
    ...(thinking && { thinking_display: 'updates' }),
    api_message_id: messageId,
  }
}

/** A text cut in the small pieces a model API streams (at least 12 characters each, at most 64 pieces). */
function pieces(text: string): string[] {
  const size = Math.max(12, Math.ceil(text.length / 64))
  const out: string[] = []
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size))
  return out
}

type Block =
  | { type: 'thinking'; thinking: string; signature: string }
  | { type: 'text'; text: string }
  | { type: 'tool_use'; id: string; name: string; input: object }

/** The deltas of one block, as the API streams them. */
function blockDeltas(block: Block): object[] {
  switch (block.type) {
    case 'thinking':
      return [...pieces(block.thinking).map((thinking) => ({ type: 'thinking_delta', thinking })), { type: 'signature_delta', signature: block.signature }]
    case 'text':
      return pieces(block.text).map((text) => ({ type: 'text_delta', text }))
    case 'tool_use':
      return pieces(JSON.stringify(block.input)).map((partial_json) => ({ type: 'input_json_delta', partial_json }))
  }
}

/** The block as content_block_start announces it: empty. */
function emptyBlock(block: Block): object {
  if (block.type === 'thinking') return { type: 'thinking', thinking: '', signature: '' }
  if (block.type === 'text') return { type: 'text', text: '' }
  return { ...block, input: {} }
}

/**
 * One model message: an `assistant` line per block; with --include-partial-messages, wrapped in
 * its stream events in the real CLI's order.
 */
function sayMessage(turn: Turn, messageId: string, blocks: Block[], stopReason: 'tool_use' | 'end_turn'): void {
  if (!args.partial) {
    for (const block of blocks) say(turn, assistantLine(messageId, block))
    return
  }
  const usage = { input_tokens: CALL_INPUT_TOKENS, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: 1 }
  say(
    turn,
    streamLine(messageId, {
      type: 'message_start',
      message: { id: messageId, type: 'message', role: 'assistant', model: args.model, content: [], stop_reason: null, stop_sequence: null, usage },
    }),
  )
  blocks.forEach((block, index) => {
    const thinking = block.type === 'thinking'
    say(turn, streamLine(messageId, { type: 'content_block_start', index, content_block: emptyBlock(block) }, thinking))
    for (const delta of blockDeltas(block)) say(turn, streamLine(messageId, { type: 'content_block_delta', index, delta }, thinking))
    say(turn, assistantLine(messageId, block))
    say(turn, streamLine(messageId, { type: 'content_block_stop', index }))
  })
  say(
    turn,
    streamLine(messageId, { type: 'message_delta', delta: { stop_reason: stopReason, stop_sequence: null }, usage: { output_tokens: CALL_OUTPUT_TOKENS } }),
  )
  say(turn, streamLine(messageId, { type: 'message_stop' }))
}

// ---- turns -----------------------------------------------------------------

interface Turn {
  entry: Entry
  startedAt: number
  /** Set once the turn printed its result (or was interrupted): it prints nothing more. */
  ended: boolean
  child?: ChildProcess
  /** Cuts the model delay short. */
  wake?: () => void
  /** Tool calls a PreToolUse hook denied. */
  denials?: object[]
  /** Withdraws the permission request the turn waits on (an interrupt). */
  withdraw?: () => void
}

let current: Turn | undefined
const queue: string[] = []
let pumping = false
let inputEnded = false
let lastTurnFailed = false

function say(turn: Turn, line: object): void {
  if (!turn.ended) emit(line)
}

function round6(n: number): number {
  return Math.round(n * 1e6) / 1e6
}

function resultLine(
  turn: Turn,
  fields: {
    subtype: string
    isError: boolean
    text?: string
    numTurns: number
    apiErrorStatus?: number
    errors?: string[]
    terminalReason: string
    calls: number
  },
): object {
  const total = (key: 'costUsd' | 'inputTokens' | 'outputTokens') => entries.reduce((sum, e) => sum + (e[key] || 0), 0)
  const modelUsage =
    total('inputTokens') > 0
      ? {
          [args.model]: {
            inputTokens: total('inputTokens'),
            outputTokens: total('outputTokens'),
            cacheReadInputTokens: 0,
            cacheCreationInputTokens: 0,
            webSearchRequests: 0,
            costUSD: round6(total('costUsd')),
            contextWindow: 200000,
            maxOutputTokens: 32000,
          },
        }
      : {}
  const durationMs = Math.max(1, Date.now() - turn.startedAt)
  return {
    type: 'result',
    subtype: fields.subtype,
    is_error: fields.isError,
    duration_ms: durationMs,
    duration_api_ms: fields.calls > 0 ? Math.max(1, Math.round(durationMs / 2)) : 0,
    num_turns: fields.numTurns,
    ...(fields.text === undefined ? {} : { result: fields.text }),
    stop_reason: fields.isError ? null : 'end_turn',
    session_id: sessionId,
    total_cost_usd: round6(total('costUsd')),
    usage: {
      input_tokens: fields.calls * CALL_INPUT_TOKENS,
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: 0,
      output_tokens: fields.calls * CALL_OUTPUT_TOKENS,
    },
    modelUsage,
    permission_denials: turn.denials ?? [],
    terminal_reason: fields.terminalReason,
    api_error_status: fields.apiErrorStatus ?? null,
    ...(fields.errors === undefined ? {} : { errors: fields.errors }),
    uuid: randomUUID(),
  }
}

/** Ends a successful turn that made `calls` model calls. */
function succeed(turn: Turn, text: string, calls: number): void {
  if (turn.ended) return
  turn.entry.costUsd = COST_PER_TURN_USD
  turn.entry.inputTokens = calls * CALL_INPUT_TOKENS
  turn.entry.outputTokens = calls * CALL_OUTPUT_TOKENS
  saveTranscript()
  emit(resultLine(turn, { subtype: 'success', isError: false, text, numTurns: calls, terminalReason: 'completed', calls }))
  turn.ended = true
  lastTurnFailed = false
}

function sayText(turn: Turn, messageId: string, text: string): void {
  sayMessage(turn, messageId, [{ type: 'text', text }], 'end_turn')
}

/** Runs a Bash tool call for real, in a process group of its own. */
async function runTool(turn: Turn, command: string, thinking: boolean): Promise<string | undefined> {
  const messageId = newMessageId()
  const toolUseId = `toolu_fake_${randomBytes(8).toString('hex')}`
  const input = { command, description: `Run ${command.slice(0, 60)}` }
  const blocks: Block[] = [{ type: 'tool_use', id: toolUseId, name: 'Bash', input }]
  if (thinking) {
    say(turn, { type: 'system', subtype: 'thinking_tokens', estimated_tokens: 13, estimated_tokens_delta: 13, session_id: sessionId, uuid: randomUUID() })
    blocks.unshift(
      { type: 'thinking', thinking: 'The user wants me to run a command. I will use Bash.', signature: 'fakesig' },
      { type: 'text', text: 'Let me run a command.' },
    )
  }
  sayMessage(turn, messageId, blocks, 'tool_use')
  const denial = await preToolUse('Bash', input, toolUseId)
  if (turn.ended) return undefined
  if (denial !== undefined) {
    if (denial.decided) (turn.denials ??= []).push({ tool_name: 'Bash', tool_use_id: toolUseId, tool_input: input })
    say(turn, {
      type: 'user',
      message: { role: 'user', content: [{ type: 'tool_result', content: denial.text, is_error: true, tool_use_id: toolUseId }] },
      parent_tool_use_id: null,
      session_id: sessionId,
      uuid: randomUUID(),
      timestamp: new Date().toISOString(),
      tool_use_result: denial.decided ? `Error: ${denial.text}` : denial.text,
    })
    return denial.text
  }
  const permitted = await canUseTool(turn, input, toolUseId)
  if (turn.ended) return undefined
  if (permitted.behavior === 'deny') {
    say(turn, {
      type: 'user',
      message: { role: 'user', content: [{ type: 'tool_result', content: permitted.message, is_error: true, tool_use_id: toolUseId }] },
      parent_tool_use_id: null,
      session_id: sessionId,
      uuid: randomUUID(),
      timestamp: new Date().toISOString(),
      tool_use_result: `Error: ${permitted.message}`,
    })
    return permitted.message
  }
  command = typeof permitted.input.command === 'string' ? permitted.input.command : command
  const run = await new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
    const child = spawn('/bin/bash', ['-c', command], { cwd: process.cwd(), detached: true, stdio: ['ignore', 'pipe', 'pipe'] })
    turn.child = child
    let stdout = ''
    let stderr = ''
    child.stdout.setEncoding('utf8').on('data', (s: string) => (stdout += s))
    child.stderr.setEncoding('utf8').on('data', (s: string) => (stderr += s))
    child.on('error', (err) => resolve({ code: 127, stdout, stderr: stderr + String(err) }))
    child.on('close', (code, signal) => resolve({ code: code ?? (signal ? 128 + (os.constants.signals[signal] ?? 0) : 1), stdout, stderr }))
  })
  turn.child = undefined
  if (turn.ended) return undefined
  const out = run.stdout.trim()
  const isError = run.code !== 0
  const content = isError ? [run.stdout.trim(), run.stderr.trim()].filter(Boolean).join('\n') : out
  say(turn, {
    type: 'user',
    message: { role: 'user', content: [{ tool_use_id: toolUseId, type: 'tool_result', content, is_error: isError }] },
    parent_tool_use_id: null,
    session_id: sessionId,
    uuid: randomUUID(),
    timestamp: new Date().toISOString(),
    tool_use_result: { stdout: run.stdout.trimEnd(), stderr: run.stderr.trimEnd(), interrupted: false, isImage: false, noOutputExpected: false },
  })
  return out
}

// ---- in-process hooks (control protocol) ----------------------------------

interface CallbackHook {
  matcher?: string
  hookCallbackIds: string[]
  timeout?: number
  onFailure?: string
}
/** What came back for one hook_callback. */
type HookAnswer = { kind: 'success'; response: unknown } | { kind: 'error' } | { kind: 'timeout' } | { kind: 'eof' }

let callbackHooks: CallbackHook[] = []
const waitingAnswers = new Map<string, (answer: HookAnswer) => void>()
const TIMEOUT_TEXT =
  'PreToolUse hook did not respond before its timeout (host client may be unreachable). The tool call was not executed; other configured hooks may not have completed.'
const STDIN_CLOSED_TEXT = "The user doesn't want to take this action right now. STOP what you are doing and wait for the user to tell you how to proceed."

function initialize(requestId: unknown, request: { hooks?: { PreToolUse?: unknown } }): void {
  const groups = Array.isArray(request.hooks?.PreToolUse) ? (request.hooks.PreToolUse as CallbackHook[]) : []
  callbackHooks = groups.filter((g) => typeof g === 'object' && g !== null && Array.isArray(g.hookCallbackIds))
  emit({
    type: 'control_response',
    response: {
      subtype: 'success',
      request_id: requestId,
      response: {
        commands: [],
        agents: [],
        models: [],
        account: {},
        output_style: 'default',
        available_output_styles: ['default'],
        pid: process.pid,
        claude_code_version: VERSION,
        current_permission_mode: args.permissionMode,
        hooks_applied: true,
        hook_on_failure_supported: true,
        hooks_when_unanswered_kept: 0,
      },
    },
  })
}

function onControlResponse(response: { subtype?: unknown; request_id?: unknown; response?: unknown }): void {
  const resolve = typeof response.request_id === 'string' ? waitingAnswers.get(response.request_id) : undefined
  if (!resolve) return // an answer to nothing the fake asked: ignored, as the real CLI does
  resolve(response.subtype === 'success' ? { kind: 'success', response: response.response } : { kind: 'error' })
}

function matcherHits(matcher: string | undefined, tool: string): boolean {
  if (matcher === undefined || matcher === '' || matcher === '*') return true
  try {
    return new RegExp(`^(?:${matcher})$`).test(tool)
  } catch {
    return matcher === tool
  }
}

function askHost(requestId: string, timeoutMs: number): Promise<HookAnswer> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => done({ kind: 'timeout' }), timeoutMs)
    const done = (answer: HookAnswer) => {
      clearTimeout(timer)
      waitingAnswers.delete(requestId)
      resolve(answer)
    }
    waitingAnswers.set(requestId, done)
    if (inputEnded) done({ kind: 'eof' })
  })
}

/** The decision in a hook answer: deny with its reason, undefined for no objection; 'invalid' when the real CLI's schema refuses it. */
function hookDecision(response: unknown): { reason: string } | undefined | 'invalid' {
  if (typeof response !== 'object' || response === null || Array.isArray(response)) return 'invalid'
  const { hookSpecificOutput: specific, decision, reason } = response as { hookSpecificOutput?: unknown; decision?: unknown; reason?: unknown }
  if (decision !== undefined && decision !== 'approve' && decision !== 'block') return 'invalid'
  if (specific !== undefined) {
    if (typeof specific !== 'object' || specific === null) return 'invalid'
    const { permissionDecision, permissionDecisionReason } = specific as { permissionDecision?: unknown; permissionDecisionReason?: unknown }
    if (permissionDecision !== undefined && permissionDecision !== 'allow' && permissionDecision !== 'deny' && permissionDecision !== 'ask') return 'invalid'
    if (permissionDecision === 'deny') return { reason: typeof permissionDecisionReason === 'string' ? permissionDecisionReason : '' }
  }
  if (decision === 'block') return { reason: typeof reason === 'string' ? reason : '' }
  return undefined
}

/** Asks the host about one call; the denial the agent reads (and whether a hook decided it), or undefined when the call may run. */
async function preToolUse(tool: string, toolInput: object, toolUseId: string): Promise<{ text: string; decided: boolean } | undefined> {
  const input = {
    session_id: sessionId,
    transcript_path: transcriptPath,
    cwd: process.cwd(),
    prompt_id: randomUUID(),
    permission_mode: args.permissionMode,
    effort: { level: 'medium' },
    hook_event_name: 'PreToolUse',
    tool_name: tool,
    tool_input: toolInput,
    tool_use_id: toolUseId,
  }
  const prefix = `PreToolUse:${tool} hook error: `
  for (const group of callbackHooks) {
    if (!matcherHits(group.matcher, tool)) continue
    for (const callbackId of group.hookCallbackIds) {
      const requestId = randomUUID()
      emit({ type: 'control_request', request_id: requestId, request: { subtype: 'hook_callback', callback_id: callbackId, input, tool_use_id: toolUseId } })
      const answer = await askHost(requestId, (group.timeout ?? 60) * 1000)
      if (answer.kind === 'timeout') {
        emit({ type: 'control_cancel_request', request_id: requestId })
        return { text: TIMEOUT_TEXT, decided: false }
      }
      if (answer.kind === 'eof') return { text: STDIN_CLOSED_TEXT, decided: false }
      const decision = answer.kind === 'success' ? hookDecision(answer.response) : 'invalid'
      if (decision === 'invalid') {
        const block = group.onFailure === 'block'
        emit({
          type: 'system',
          subtype: 'informational',
          level: 'warning',
          tag: 'hook_callback_failed',
          uuid: randomUUID(),
          session_id: sessionId,
          content: `PreToolUse: Hook callback ${callbackId} failed: the SDK host replied with an error or an invalid answer. ${block ? 'onFailure is "block", so this failure counts as a block.' : 'Its answer was treated as empty.'}`,
        })
        if (block)
          return {
            text: `${prefix}[callback]: failed; blocking because onFailure is "block"\nHook callback ${callbackId} failed: the SDK host replied with an error or an invalid answer.`,
            decided: true,
          }
        continue
      }
      if (decision !== undefined) return { text: `${prefix}${decision.reason}`, decided: true }
    }
  }
  return undefined
}

/**
 * With `--permission-prompt-tool stdio` in an asking mode (not bypassPermissions), a Bash call is asked
 * about as the real CLI does (claude-2.1.330-permission-prompts.json): `can_use_tool` with the exact
 * command as its suggestion; allow runs `updatedInput`, deny gives the agent the message; the request
 * is withdrawn (control_cancel_request) when the turn is interrupted. FAKE_CLAUDE_ANSWER_LOG names a
 * file where the time each answer arrived is appended (`<request id> <epoch ms, µs precision>`), for
 * the approval latency benchmark.
 */
async function canUseTool(
  turn: Turn,
  input: { command: string; description: string },
  toolUseId: string,
): Promise<{ behavior: 'allow'; input: Record<string, unknown> } | { behavior: 'deny'; message: string }> {
  if (args.promptTool !== 'stdio' || args.permissionMode === 'bypassPermissions') return { behavior: 'allow', input }
  const requestId = randomUUID()
  emit({
    type: 'control_request',
    request_id: requestId,
    request: {
      subtype: 'can_use_tool',
      tool_name: 'Bash',
      display_name: 'Bash',
      input,
      description: input.description,
      permission_suggestions: [
        { type: 'addRules', rules: [{ toolName: 'Bash', ruleContent: input.command }], behavior: 'allow', destination: 'localSettings' },
        { type: 'addDirectories', directories: [process.cwd()], destination: 'session' },
        { type: 'setMode', mode: 'acceptEdits', destination: 'session' },
      ],
      tool_use_id: toolUseId,
    },
  })
  const answer = await new Promise<HookAnswer>((resolve) => {
    waitingAnswers.set(requestId, (got) => {
      waitingAnswers.delete(requestId)
      resolve(got)
    })
    turn.withdraw = () => {
      emit({ type: 'control_cancel_request', request_id: requestId })
      waitingAnswers.get(requestId)?.({ kind: 'eof' })
    }
  })
  turn.withdraw = undefined
  if (process.env.FAKE_CLAUDE_ANSWER_LOG)
    fs.appendFileSync(process.env.FAKE_CLAUDE_ANSWER_LOG, `${requestId} ${(performance.timeOrigin + performance.now()).toFixed(3)}\n`)
  const response = answer.kind === 'success' ? (answer.response as { behavior?: unknown; updatedInput?: unknown; message?: unknown } | null) : null
  if (response?.behavior === 'allow' && typeof response.updatedInput === 'object' && response.updatedInput !== null)
    return { behavior: 'allow', input: response.updatedInput as Record<string, unknown> }
  if (answer.kind === 'eof')
    return {
      behavior: 'deny',
      message:
        "The user doesn't want to proceed with this tool use. The tool use was rejected (eg. if it was a file edit, the new_string was NOT written to the file). STOP what you are doing and wait for the user to tell you how to proceed.",
    }
  return { behavior: 'deny', message: typeof response?.message === 'string' ? response.message : 'denied' }
}

async function act(turn: Turn): Promise<void> {
  if (modelDelayMs > 0) {
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, modelDelayMs)
      turn.wake = () => {
        clearTimeout(timer)
        resolve()
      }
    })
  }
  if (turn.ended) return
  const prompt = turn.entry.prompt
  let m: RegExpExecArray | null
  if ((m = /tool:[ \t]*(.+)/.exec(prompt))) {
    const out = await runTool(turn, (m[1] ?? '').trim(), true)
    if (out === undefined) return
    const text = `Done. The tool said: "${out}"`
    sayText(turn, newMessageId(), text)
    succeed(turn, text, 2)
  } else if ((m = /sleep:\s*(\d+(?:\.\d+)?|\.\d+)/.exec(prompt))) {
    if ((await runTool(turn, `sleep ${m[1]}`, false)) === undefined) return
    succeed(turn, '', 2)
  } else if ((m = /burst:\s*(\d+)/.exec(prompt))) {
    const n = Number(m[1])
    const messageId = newMessageId()
    let chunk = ''
    for (let i = 1; i <= n; i++) {
      chunk += JSON.stringify(assistantLine(messageId, { type: 'text', text: `part ${i}` })) + '\n'
      if (chunk.length >= WRITE_CHUNK_CHARS) {
        if (!turn.ended) await write(chunk)
        chunk = ''
      }
    }
    if (chunk && !turn.ended) await write(chunk)
    succeed(turn, n > 0 ? `part ${n}` : '', 1)
  } else if ((m = /stamped:\s*(\d+)\s+(\d+)/.exec(prompt))) {
    const n = Number(m[1])
    const perMs = Number(m[2]) / 1000
    const messageId = newMessageId()
    const start = performance.now()
    for (let i = 0; i < n && !turn.ended; ) {
      // Write each line when its time has come, so every line's stamp is its own write time.
      const due = Math.min(n, Math.floor((performance.now() - start) * perMs) + 1)
      for (; i < due; i++) {
        const stamp = (performance.timeOrigin + performance.now()).toFixed(3)
        process.stdout.write(JSON.stringify(assistantLine(messageId, { type: 'text', text: `t=${stamp}` })) + '\n')
      }
      // Sleep between batches rather than spin: a spinning fake would steal the CPU being measured.
      await new Promise((resolve) => setTimeout(resolve, 1))
    }
    succeed(turn, `stamped ${n}`, 1)
  } else if (/\bfail\b/.test(prompt)) {
    fail(turn)
  } else if (/\bcrash\b/.test(prompt)) {
    sayText(turn, newMessageId(), 'Working on it…')
    process.stderr.write('fake-claude: simulated crash\n')
    process.exit(3)
  } else if (/\bnoise\b/.test(prompt)) {
    process.stdout.write('this line is not JSON {\n')
    emit({ type: 'fake_unknown_type', session_id: sessionId, uuid: randomUUID() })
    emit({ type: 'system', subtype: 'status', status: 'requesting', session_id: sessionId, uuid: randomUUID() })
    echo(turn, `Echo: ${prompt}`)
  } else if ((m = /big:\s*(\d+)/.exec(prompt))) {
    echo(turn, 'x'.repeat(Number(m[1])))
  } else if (/\brecall\b/.test(prompt)) {
    const earlier = entries.slice(0, -1).map((e) => e.prompt)
    echo(turn, `Earlier prompts: ${earlier.length > 0 ? earlier.join(' | ') : '(none)'}`)
  } else if (prompt.includes('system?')) {
    echo(turn, `System: ${args.appendSystemPrompt ?? '(none)'}`)
  } else {
    echo(turn, `Echo: ${prompt}`)
  }
}

function echo(turn: Turn, text: string): void {
  sayText(turn, newMessageId(), text)
  succeed(turn, text, 1)
}

/** A model API failure, shaped like sample-api-error-500.jsonl. */
function fail(turn: Turn): void {
  const text = 'API Error: 500 fake failure 500. This is a server-side issue, usually temporary — try again in a moment.'
  say(turn, {
    type: 'system',
    subtype: 'api_retry',
    attempt: 1,
    max_retries: 1,
    retry_delay_ms: 1,
    error_status: 500,
    error: 'server_error',
    session_id: sessionId,
    uuid: randomUUID(),
  })
  say(turn, {
    ...assistantLine(randomUUID(), { type: 'text', text }, '<synthetic>'),
    error: 'server_error',
    is_api_error_message: true,
    api_error_status: 500,
    api_error_type: 'api_error',
  })
  saveTranscript()
  say(turn, {
    ...resultLine(turn, { subtype: 'success', isError: true, text, numTurns: 1, apiErrorStatus: 500, terminalReason: 'api_error', calls: 0 }),
    api_error_type: 'api_error',
  })
  turn.ended = true
  lastTurnFailed = true
}

async function runTurn(prompt: string): Promise<void> {
  await ready
  const entry: Entry = { type: 'user', prompt, timestamp: new Date().toISOString(), costUsd: 0, inputTokens: 0, outputTokens: 0 }
  entries.push(entry)
  saveTranscript()
  const turn: Turn = { entry, startedAt: Date.now(), ended: false }
  current = turn
  try {
    emit(initLine())
    await act(turn)
  } finally {
    current = undefined
  }
}

async function pump(): Promise<void> {
  if (pumping) return
  pumping = true
  while (queue.length > 0) await runTurn(queue.shift() ?? '')
  pumping = false
  if (inputEnded) exit(args.inputFormat === 'stream-json' ? 0 : lastTurnFailed ? 1 : 0)
}

function exit(code: number): void {
  process.stdout.write('', () => process.exit(code))
}

/** Ends the running turn without exiting, like the real CLI's interrupt. */
function interrupt(requestId: unknown): void {
  emit({ type: 'control_response', response: { subtype: 'success', request_id: requestId, response: { still_queued: [] } } })
  const turn = current
  if (!turn || turn.ended) return
  turn.withdraw?.()
  turn.ended = true
  turn.wake?.()
  if (turn.child?.pid !== undefined) {
    try {
      process.kill(-turn.child.pid, 'SIGKILL')
    } catch {}
  }
  emit({
    type: 'user',
    message: { role: 'user', content: [{ type: 'text', text: '[Request interrupted by user]' }] },
    parent_tool_use_id: null,
    session_id: sessionId,
    uuid: randomUUID(),
    timestamp: new Date().toISOString(),
  })
  saveTranscript()
  emit(
    resultLine(turn, {
      subtype: 'error_during_execution',
      isError: true,
      numTurns: 2,
      terminalReason: 'aborted_streaming',
      calls: 0,
      errors: ['[ede_diagnostic] result_type=user last_content_type=n/a stop_reason=null'],
    }),
  )
  lastTurnFailed = true
}

function promptText(content: unknown): string {
  if (typeof content === 'string') return content
  if (!Array.isArray(content)) return ''
  return content
    .filter((b): b is { type: 'text'; text: string } => typeof b === 'object' && b !== null && b.type === 'text' && typeof b.text === 'string')
    .map((b) => b.text)
    .join('\n')
}

function onInputLine(line: string): void {
  if (line.trim() === '') return
  let msg: {
    type?: unknown
    message?: { content?: unknown }
    request_id?: unknown
    request?: { subtype?: unknown; hooks?: { PreToolUse?: unknown } }
    response?: { subtype?: unknown; request_id?: unknown; response?: unknown }
  }
  try {
    msg = JSON.parse(line)
  } catch (err) {
    // The real CLI ends on a line it cannot parse.
    process.stderr.write(`Error parsing streaming input line (type=unknown, ${line.length} chars): ${(err as Error).name}\n`)
    exit(1)
    return
  }
  if (msg.type === 'user') {
    queue.push(promptText(msg.message?.content))
    void pump()
  } else if (msg.type === 'control_request') {
    if (msg.request?.subtype === 'interrupt') interrupt(msg.request_id)
    else if (msg.request?.subtype === 'initialize') initialize(msg.request_id, msg.request)
    else
      emit({
        type: 'control_response',
        response: { subtype: 'error', request_id: msg.request_id, error: `Unsupported control request: ${String(msg.request?.subtype)}` },
      })
  } else if (msg.type === 'control_response' && msg.response) {
    onControlResponse(msg.response)
  }
}

// ---- main ------------------------------------------------------------------

if (args.resume !== undefined && stored === undefined) {
  // The real CLI starts, finds nothing to resume and ends the turn in error.
  await ready
  emit(initLine())
  emit(
    resultLine(
      { entry: { type: 'user', prompt: '', timestamp: '', costUsd: 0, inputTokens: 0, outputTokens: 0 }, startedAt: Date.now(), ended: false },
      {
        subtype: 'error_during_execution',
        isError: true,
        numTurns: 0,
        terminalReason: 'error',
        calls: 0,
        errors: [`No conversation found with session ID: ${sessionId}`],
      },
    ),
  )
  exit(1)
} else if (args.inputFormat === 'stream-json') {
  const rl = readline.createInterface({ input: process.stdin, crlfDelay: Infinity })
  rl.on('line', onInputLine)
  rl.on('close', () => {
    inputEnded = true
    // A tool call waiting for the host is denied when the host goes away.
    for (const resolve of [...waitingAnswers.values()]) resolve({ kind: 'eof' })
    if (!pumping) void pump()
  })
} else {
  // `-p "prompt"`, or the prompt on stdin: one turn, then exit.
  let prompt = args.prompt
  if (prompt === undefined) {
    const chunks: Buffer[] = []
    for await (const chunk of process.stdin) chunks.push(chunk as Buffer)
    prompt = Buffer.concat(chunks).toString('utf8').trim()
  }
  queue.push(prompt)
  inputEnded = true
  void pump()
}
