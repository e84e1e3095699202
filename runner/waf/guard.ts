import { fileURLToPath } from 'node:url'
import path from 'node:path'
import type { Logger } from 'pino'
import type { EventOf } from '../../contract/mod.ts'
import type { PreToolHook } from '../engine/engine.ts'
import { hostFsView } from './fs-view.ts'
import { HOOK_CLI_TIMEOUT_S, WAF_SOCKET_VAR, type HookReply, type HookRequest } from './hook-protocol.ts'
import { WafHookServer } from './hook-server.ts'
import { blockReason, compileRules, inspect, inspectToolCall, type CompiledRules, type InspectOptions, type InspectResult, type WafMatch } from './matcher.ts'
import { resolveRules, type WafConfig } from './rules.ts'

export type { WafMatch }

/** An `error` event before the runner stamps it (session id, sequence, time). */
export type ErrorDraft = Omit<EventOf<'error'>, 'session_id' | 'seq' | 'ts'>

/** The tool call a block was about, when it was one. */
export interface BlockedTool {
  id?: string
  name: string
}

/** Called on every block, for metrics and traces (observability). */
export type WafBlockListener = (match: WafMatch, sessionId: string, tool?: BlockedTool) => void

export interface RunnerWafOptions {
  config: WafConfig
  log: Logger
  /** The CLI's $HOME, shown as `~` when paths are matched. */
  home?: string | undefined
  onBlock?: WafBlockListener | undefined
  /** Where the hook server makes its private directory (default: the OS temp directory). */
  socketParentDir?: string | undefined
  /** The Node binary that runs the hook script (default: the runner's own). */
  nodePath?: string | undefined
  /** Extra variables for the hook's CLI environment (tests shorten the hook's deadline this way). */
  hookEnv?: Record<string, string> | undefined
}

/** What a session needs from the WAF. */
export interface SessionWaf {
  /** The `error` event that ends the turn when the prompt is blocked; undefined when it may go to the CLI. */
  checkPrompt(prompt: string): ErrorDraft | undefined
  /**
   * Serves the tool hook of the CLI process tagged `tag`: each denied call is
   * reported through `report` (an `error` event with `tool`; the turn goes on).
   * Start the process with the returned environment and hook; detach when it exits.
   */
  attach(tag: string, report: (draft: ErrorDraft) => void): Promise<WafAttachment>
}

export interface WafAttachment {
  /** Added to the CLI's environment. */
  env: Record<string, string>
  preToolHook: PreToolHook
  detach(): void
}

const HOOK_SCRIPT = fileURLToPath(new URL('./hook.ts', import.meta.url))

/**
 * The runner's WAF: the rules compiled once, the prompt check, and one hook
 * server for every CLI process of the runner (started on first use). A hook
 * call is matched to its session by the process tag in the CLI's environment.
 */
export class RunnerWaf {
  readonly #options: RunnerWafOptions
  readonly #rules: CompiledRules
  readonly #inspectOptions: InspectOptions
  readonly #attached = new Map<string, { sessionId: string; report: (draft: ErrorDraft) => void }>()
  #server: Promise<WafHookServer> | undefined
  #closed = false

  constructor(options: RunnerWafOptions) {
    this.#options = options
    this.#rules = compileRules(resolveRules(options.config))
    this.#inspectOptions = options.home !== undefined ? { home: options.home } : {}
  }

  forSession(sessionId: string): SessionWaf {
    return {
      checkPrompt: (prompt) => this.#checkPrompt(sessionId, prompt),
      attach: (tag, report) => this.#attach(sessionId, tag, report),
    }
  }

  /** Stops the hook server; hooks still running deny their calls. */
  async close(): Promise<void> {
    this.#closed = true
    const server = this.#server
    this.#server = undefined
    this.#attached.clear()
    await server?.then((s) => s.close(), () => {})
  }

  #checkPrompt(sessionId: string, prompt: string): ErrorDraft | undefined {
    const result = inspect(prompt, 'prompt', this.#rules, { ...this.#inspectOptions, fs: hostFsView(undefined) })
    this.#logWarnings(result, sessionId, 'prompt')
    const match = firstBlock(result)
    if (!match) return undefined
    this.#blocked(match, sessionId)
    const message = blockReason(result)
    return { event: 'error', data: message, error: { code: 'WAF_BLOCKED', message }, waf: wafField(match) }
  }

  async #attach(sessionId: string, tag: string, report: (draft: ErrorDraft) => void): Promise<WafAttachment> {
    if (this.#closed) throw new Error('the WAF is closed')
    this.#server ??= WafHookServer.listen((request) => this.#decide(request), { parentDir: this.#options.socketParentDir })
    let server: WafHookServer
    try {
      server = await this.#server
    } catch (err) {
      this.#server = undefined
      throw new Error(`the WAF hook server cannot start: ${(err as Error).message}`, { cause: err })
    }
    this.#attached.set(tag, { sessionId, report })
    return {
      env: { ...this.#options.hookEnv, [WAF_SOCKET_VAR]: server.socketPath },
      preToolHook: { command: hookCommand(this.#options.nodePath ?? process.execPath, server.dir), timeoutSeconds: HOOK_CLI_TIMEOUT_S },
      detach: () => {
        if (this.#attached.get(tag)?.report === report) this.#attached.delete(tag)
      },
    }
  }

  #decide(request: HookRequest): HookReply {
    const entry = this.#attached.get(request.tag)
    if (!entry) {
      this.#options.log.warn({ tool: request.tool_name }, 'WAF hook call from a process no session of this runner owns; denied')
      return { decision: 'deny', reason: 'The agent runtime does not know this CLI process (its session ended or moved), so its tool calls are denied.' }
    }
    const { sessionId } = entry
    // Globs in a command are expanded against the real filesystem, from the CLI's working directory.
    const result = inspectToolCall(request.tool_name, request.tool_input, this.#rules, { ...this.#inspectOptions, fs: hostFsView(request.cwd) })
    this.#logWarnings(result, sessionId, request.tool_name)
    const match = firstBlock(result)
    if (!match) return { decision: 'allow' }
    const tool: BlockedTool = { name: request.tool_name, ...(request.tool_use_id !== undefined && { id: request.tool_use_id }) }
    this.#blocked(match, sessionId, tool)
    const message = blockReason(result)
    entry.report({ event: 'error', data: message, error: { code: 'WAF_BLOCKED', message }, waf: wafField(match), tool: { ...tool, input: request.tool_input } })
    return { decision: 'deny', reason: `${message}. The tool call was not run.` }
  }

  #blocked(match: WafMatch, sessionId: string, tool?: BlockedTool): void {
    this.#options.log.warn({ session_id: sessionId, rule_id: match.rule_id, category: match.category, target: match.target, tool: tool?.name, excerpt: match.excerpt }, tool ? 'WAF denied a tool call' : 'WAF blocked a prompt')
    try {
      this.#options.onBlock?.(match, sessionId, tool)
    } catch (err) {
      this.#options.log.error({ session_id: sessionId, err }, 'WAF block listener failed')
    }
  }

  #logWarnings(result: InspectResult, sessionId: string, what: string): void {
    for (const match of result.matches) {
      if (match.level === 'warn') this.#options.log.info({ session_id: sessionId, rule_id: match.rule_id, category: match.category, excerpt: match.excerpt, input: what }, 'WAF warning')
    }
  }
}

function firstBlock(result: InspectResult): WafMatch | undefined {
  return result.blocked ? result.matches.find((m) => m.level === 'block') : undefined
}

function wafField(match: WafMatch): NonNullable<ErrorDraft['waf']> {
  const { rule_id, category, level, description, excerpt, target, field } = match
  return { rule_id, category, level, description, excerpt, target, ...(field !== undefined && { field }) }
}

/** Single-quotes a word for /bin/sh. */
export function shellQuote(word: string): string {
  return `'${word.replaceAll("'", `'\\''`)}'`
}

/**
 * The hook's command line for /bin/sh. The Node compile cache in the server's
 * private directory halves the hook's start (no TypeScript stripping after the
 * first call); it is used only while that directory exists, so a hook that
 * runs after the server closed does not create it again.
 */
export function hookCommand(nodePath: string, serverDir: string): string {
  const cache = shellQuote(path.join(serverDir, 'node-cache'))
  return `if [ -d ${cache} ]; then export NODE_COMPILE_CACHE=${cache}; fi; exec ${shellQuote(nodePath)} ${shellQuote(HOOK_SCRIPT)}`
}
