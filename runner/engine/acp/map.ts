/**
 * ACP `session/update` notifications → EngineOutput. Pure: one mapper per
 * agent process keeps what a turn's outputs depend on (the text and thought
 * being written, the tool calls already reported), no I/O.
 *
 * Shapes recorded from gemini --acp 0.61.0, claude-code-acp 0.16.2 and
 * codex-acp 0.16.0 (../shared/reference/acp/):
 * - `agent_message_chunk` / `agent_thought_chunk` `{content:{type:"text",text}}`:
 *   a delta each; the whole block follows when something else arrives or the
 *   turn ends (claude-code-acp sends empty chunks first: skipped);
 * - `tool_call` / `tool_call_update` `{toolCallId, title, kind, status, rawInput?,
 *   rawOutput?, content?}`: one tool_use per toolCallId, once its input is
 *   known (claude-code-acp first sends `rawInput: {}`, then the command; Gemini
 *   sends no rawInput: a shell call's command is its title); one tool_result
 *   when it is completed or failed;
 * - `plan {entries[{content,status}]}`: a checklist, as thinking;
 * - anything else (`available_commands_update`, `usage_update`, mode and
 *   config updates): nothing.
 */
import type { EngineOutput } from '../engine.ts'
import type { ToolCall } from '../../../waf/mod.ts'

type Obj = Record<string, unknown>

/** What the runner and the WAF see of one ACP tool call. */
export interface AcpToolCall {
  id: string
  /** The agent's own tool name where it says it (claude-code-acp `Bash`, Gemini `run_shell_command`), else `shell` for a command, else the title. */
  name: string
  /** A shell call: `{command}` (a string); otherwise the agent's raw input, or what its title and locations tell. */
  input: Obj
  /** The shell command, when the call runs one. */
  command?: string
  /** ACP's kind of the call (`edit`, `read`, `execute`, …), when the agent said. */
  kind?: string
}

/** Turns one agent process's session updates into outputs. */
export class SessionUpdateMapper {
  #text = ''
  #thinking = ''
  /** Tool calls whose tool_use was sent, as they were described then. */
  readonly #announced = new Map<string, AcpToolCall>()
  /** Tool calls whose tool_result was sent. */
  readonly #finished = new Set<string>()

  /** The outputs of one `session/update` params' `update`. */
  map(update: unknown): EngineOutput[] {
    if (!isObj(update)) return []
    switch (update.sessionUpdate) {
      case 'agent_message_chunk':
        return this.#chunk('text', update.content)
      case 'agent_thought_chunk':
        return this.#chunk('thinking', update.content)
      case 'tool_call':
      case 'tool_call_update':
        return [...this.flush(), ...this.#tool(update)]
      case 'plan':
        return [...this.flush(), ...planOutputs(update.entries)]
      default:
        return []
    }
  }

  /**
   * A tool call the agent asks permission for (`session/request_permission`
   * `toolCall`): announced now if it was not yet (Gemini asks instead of
   * sending `tool_call`). Returns the call as the WAF should see it.
   */
  permissionAsked(toolCall: unknown): { outputs: EngineOutput[]; call: AcpToolCall | undefined } {
    if (!isObj(toolCall)) return { outputs: [], call: undefined }
    const id = typeof toolCall.toolCallId === 'string' ? toolCall.toolCallId : ''
    // The request's own input is what will run; the earlier notification may have named the tool (claude-code-acp's `_meta`).
    const call = describeToolCall(toolCall, this.#announced.get(id)?.name)
    if (!call) return { outputs: [], call: undefined }
    const outputs = this.flush()
    if (!this.#announced.has(id)) {
      this.#announced.set(id, call)
      outputs.push({ kind: 'tool_use', id, name: call.name, input: call.input })
    }
    return { outputs, call }
  }

  /** The text or thought being written, whole, before something else (or the end of the turn). */
  flush(): EngineOutput[] {
    const out: EngineOutput[] = []
    if (this.#thinking !== '') out.push({ kind: 'thinking', text: this.#thinking })
    if (this.#text !== '') out.push({ kind: 'text', text: this.#text })
    this.#thinking = ''
    this.#text = ''
    return out
  }

  #chunk(kind: 'text' | 'thinking', content: unknown): EngineOutput[] {
    const piece = isObj(content) && content.type === 'text' && typeof content.text === 'string' ? content.text : ''
    if (piece === '') return []
    // A thought ends when text starts, and the other way round.
    const out: EngineOutput[] = []
    if (kind === 'text') {
      if (this.#thinking !== '') out.push(...this.flush())
      this.#text += piece
      out.push({ kind: 'text_delta', text: piece })
    } else {
      if (this.#text !== '') out.push(...this.flush())
      this.#thinking += piece
      out.push({ kind: 'thinking_delta', text: piece })
    }
    return out
  }

  #tool(update: Obj): EngineOutput[] {
    const id = typeof update.toolCallId === 'string' ? update.toolCallId : undefined
    if (id === undefined) return []
    const out: EngineOutput[] = []
    const done = update.status === 'completed' || update.status === 'failed'
    if (!this.#announced.has(id) && (hasInput(update) || done || update.status === 'in_progress')) {
      const call = describeToolCall(update)
      if (call) {
        this.#announced.set(id, call)
        out.push({ kind: 'tool_use', id, name: call.name, input: call.input })
      }
    }
    if (done && !this.#finished.has(id)) {
      this.#finished.add(id)
      out.push({ kind: 'tool_result', toolUseId: id, content: resultText(update), isError: isFailure(update) })
    }
    return out
  }
}

/** The ToolCall the WAF inspects: a shell call as `{command}`, so the rules for Claude's Bash read it. */
export function wafToolCall(call: AcpToolCall, cwd: string): ToolCall {
  return { toolName: call.name, input: call.input, toolUseId: call.id, cwd }
}

/** Gemini CLI's tools as Claude Code names them, so approval rules such as `Edit(src/**)` read every agent alike. */
const CLAUDE_NAMES: Record<string, string> = {
  run_shell_command: 'Bash',
  shell: 'Bash',
  exec_command: 'Bash',
  write_file: 'Write',
  replace: 'Edit',
  read_file: 'Read',
  read_many_files: 'Read',
  list_directory: 'LS',
  glob: 'Glob',
  search_file_content: 'Grep',
  web_fetch: 'WebFetch',
  google_web_search: 'WebSearch',
}
/** codex-acp names a call by its title: its ACP kind tells the tool. */
const KIND_NAMES: Record<string, string> = { edit: 'Edit', read: 'Read', search: 'Grep', fetch: 'WebFetch' }
const CLAUDE_TOOLS = new Set([
  'Bash',
  'Write',
  'Edit',
  'MultiEdit',
  'NotebookEdit',
  'Read',
  'Grep',
  'Glob',
  'LS',
  'WebFetch',
  'WebSearch',
  'Task',
  'Agent',
  'BashOutput',
  'KillShell',
])

/**
 * The ToolCall a person's approval rules read (`Bash(git status*)`,
 * `Edit(src/**)`): Claude Code's tool names and inputs, whichever agent asks
 * (a shell call is `Bash {command}`, a file tool has `file_path`).
 */
export function approvalToolCall(call: AcpToolCall, cwd: string): ToolCall {
  const base = { toolUseId: call.id, cwd }
  if (call.command !== undefined) return { ...base, toolName: 'Bash', input: { command: call.command } }
  const byKind = call.kind !== undefined && !CLAUDE_TOOLS.has(call.name) ? KIND_NAMES[call.kind] : undefined
  const toolName = CLAUDE_NAMES[call.name] ?? byKind ?? call.name
  const path = call.input.file_path ?? call.input.absolute_path ?? call.input.path
  return { ...base, toolName, input: typeof path === 'string' ? { ...call.input, file_path: path } : call.input }
}

/** Name and input of an ACP tool call (a `tool_call`, a `tool_call_update` or a permission request's `toolCall`). */
export function describeToolCall(toolCall: Obj, knownName?: string): AcpToolCall | undefined {
  const id = typeof toolCall.toolCallId === 'string' ? toolCall.toolCallId : undefined
  if (id === undefined) return undefined
  const raw = isObj(toolCall.rawInput) ? toolCall.rawInput : {}
  const title = typeof toolCall.title === 'string' ? toolCall.title : ''
  const named = agentToolName(toolCall, id) ?? knownName
  const command = shellCommand(raw, toolCall.kind, title, named)
  const kind = typeof toolCall.kind === 'string' ? { kind: toolCall.kind } : {}
  if (command !== undefined) return { id, name: named ?? 'shell', input: { command }, command }
  if (Object.keys(raw).length > 0) return { id, name: named ?? (title || 'tool'), input: raw, ...kind }
  const input: Obj = { title }
  const path = firstLocation(toolCall.locations)
  if (path !== undefined) input.path = path
  return { id, name: named ?? (title || 'tool'), input, ...kind }
}

/** claude-code-acp names its tool in `_meta.claudeCode.toolName`; Gemini's call ids are `<tool>__<call id>`. */
function agentToolName(toolCall: Obj, id: string): string | undefined {
  const meta = isObj(toolCall._meta) && isObj(toolCall._meta.claudeCode) ? toolCall._meta.claudeCode : undefined
  if (meta && typeof meta.toolName === 'string') return meta.toolName
  const prefix = /^([a-z][a-z0-9_]*)__/.exec(id)
  return prefix?.[1]
}

const SHELL_TOOLS = new Set(['Bash', 'run_shell_command', 'shell', 'exec_command'])

/**
 * The command a shell call runs: codex-acp `rawInput.command` (argv, `/bin/bash
 * -lc CMD`, whatever the call's kind: `ls` is `search`, `cat` is `read`);
 * claude-code-acp `rawInput.command` (a string); Gemini none in rawInput, its
 * title is the command.
 */
function shellCommand(raw: Obj, kind: unknown, title: string, named: string | undefined): string | undefined {
  const argv = raw.command
  if (Array.isArray(argv) && argv.length > 0 && argv.every((a) => typeof a === 'string')) return scriptOf(argv as string[])
  const shell = kind === 'execute' || (named !== undefined && SHELL_TOOLS.has(named))
  if (!shell) return undefined
  if (typeof raw.command === 'string' && raw.command !== '') return raw.command
  if (Object.keys(raw).length > 0) return undefined
  // Gemini: no rawInput at all, the title is the command line.
  return named === 'run_shell_command' && title !== '' ? title : undefined
}

/** `bash -lc CMD` / `sh -c CMD`: the command is the script; any other argv, its words. */
function scriptOf(argv: string[]): string {
  const flag = argv.findIndex((a, i) => i > 0 && /^-[a-z]*c$/.test(a))
  if (flag > 0 && flag === argv.length - 2 && /(^|\/)(ba|z|da)?sh$/.test(argv[0]!)) return argv[flag + 1]!
  return argv.join(' ')
}

function hasInput(update: Obj): boolean {
  return isObj(update.rawInput) && Object.keys(update.rawInput).length > 0
}

/** The tool's output: its text content, else rawOutput (codex-acp: formatted_output; claude-code-acp: a string). */
function resultText(update: Obj): string {
  const texts = Array.isArray(update.content) ? update.content.flatMap(contentText) : []
  if (texts.length > 0) return texts.join('\n')
  const raw = update.rawOutput
  if (typeof raw === 'string') return raw
  if (isObj(raw)) {
    for (const key of ['formatted_output', 'aggregated_output', 'stdout', 'output']) if (typeof raw[key] === 'string') return raw[key] as string
    return JSON.stringify(raw)
  }
  return ''
}

function isFailure(update: Obj): boolean {
  if (update.status === 'failed') return true
  return isObj(update.rawOutput) && typeof update.rawOutput.exit_code === 'number' && update.rawOutput.exit_code !== 0
}

function contentText(item: unknown): string[] {
  if (!isObj(item) || item.type !== 'content' || !isObj(item.content)) return []
  return item.content.type === 'text' && typeof item.content.text === 'string' && item.content.text !== '' ? [item.content.text] : []
}

function firstLocation(locations: unknown): string | undefined {
  if (!Array.isArray(locations)) return undefined
  const first: unknown = locations[0]
  return isObj(first) && typeof first.path === 'string' ? first.path : undefined
}

const PLAN_MARKS: Record<string, string> = { completed: '[x]', in_progress: '[~]' }

/** A plan as a checklist: `[x]` done, `[~]` in progress, `[ ]` pending. */
function planOutputs(entries: unknown): EngineOutput[] {
  if (!Array.isArray(entries)) return []
  const lines = entries
    .filter(isObj)
    .filter((e) => typeof e.content === 'string')
    .map((e) => `${PLAN_MARKS[String(e.status)] ?? '[ ]'} ${String(e.content)}`)
  return lines.length > 0 ? [{ kind: 'thinking', text: `Plan:\n${lines.join('\n')}` }] : []
}

function isObj(v: unknown): v is Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v)
}
