import type { Logger } from 'pino'
import type { EventOf } from '../contract/mod.ts'
import type { ToolCall, ToolDecision, ToolGate } from './tool-gate.ts'
import { hostFsView } from './fs-view.ts'
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
  /** How long the CLI waits for the runner's answer to a tool call before it denies it (default TOOL_GATE_TIMEOUT_S). */
  toolTimeoutSeconds?: number | undefined
}

/**
 * The CLI's deadline for the runner's answer to one tool call, in seconds. The
 * runner decides in-process and at once; a late answer means a stuck runner,
 * and the CLI then denies the call.
 */
export const TOOL_GATE_TIMEOUT_S = 10

/** What a session needs from the WAF. */
export interface SessionWaf {
  /** The `error` event that ends the turn when the prompt is blocked; undefined when it may go to the CLI. */
  checkPrompt(prompt: string): ErrorDraft | undefined
  /**
   * The tool gate of one CLI process: the engine asks it before every tool
   * call (in-process, over the CLI's control protocol). Each denied call is
   * reported through `report` (an `error` event with `tool`; the turn goes on).
   * Detach when the process exits: a call asked after that is denied.
   */
  attach(report: (draft: ErrorDraft) => void): WafAttachment
}

export interface WafAttachment {
  gate: ToolGate
  detach(): void
}

/**
 * The runner's WAF: the rules compiled once, the prompt check, and the tool
 * gate each CLI process of the runner asks before every tool call.
 */
export class RunnerWaf {
  readonly #options: RunnerWafOptions
  readonly #rules: CompiledRules
  readonly #inspectOptions: InspectOptions
  #closed = false

  constructor(options: RunnerWafOptions) {
    this.#options = options
    this.#rules = compileRules(resolveRules(options.config))
    this.#inspectOptions = options.home !== undefined ? { home: options.home } : {}
  }

  forSession(sessionId: string): SessionWaf {
    return {
      checkPrompt: (prompt) => this.#checkPrompt(sessionId, prompt),
      attach: (report) => this.#attach(sessionId, report),
    }
  }

  /** From now on every tool gate denies (a runner going away checks nothing more). */
  close(): Promise<void> {
    this.#closed = true
    return Promise.resolve()
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

  #attach(sessionId: string, report: (draft: ErrorDraft) => void): WafAttachment {
    if (this.#closed) throw new Error('the WAF is closed')
    let attached = true
    return {
      gate: {
        check: (call) => {
          if (this.#closed)
            return { decision: 'deny', reason: "The agent runtime's WAF could not check this tool call, so it was not run: the runner is shutting down." }
          if (!attached) {
            this.#options.log.warn(
              { session_id: sessionId, tool: call.toolName },
              'WAF asked about a tool call of a CLI process no session of this runner owns; denied',
            )
            return { decision: 'deny', reason: 'The agent runtime does not know this CLI process (its session ended or moved), so its tool calls are denied.' }
          }
          return this.#decide(sessionId, call, report)
        },
        timeoutSeconds: this.#options.toolTimeoutSeconds ?? TOOL_GATE_TIMEOUT_S,
      },
      detach: () => {
        attached = false
      },
    }
  }

  #decide(sessionId: string, call: ToolCall, report: (draft: ErrorDraft) => void): ToolDecision {
    // Globs in a command are expanded against the real filesystem, from the CLI's working directory.
    const result = inspectToolCall(call.toolName, call.input, this.#rules, { ...this.#inspectOptions, fs: hostFsView(call.cwd) })
    this.#logWarnings(result, sessionId, call.toolName)
    const match = firstBlock(result)
    if (!match) return { decision: 'allow' }
    const tool: BlockedTool = { name: call.toolName, ...(call.toolUseId !== undefined && { id: call.toolUseId }) }
    this.#blocked(match, sessionId, tool)
    const message = blockReason(result)
    report({ event: 'error', data: message, error: { code: 'WAF_BLOCKED', message }, waf: wafField(match), tool: { ...tool, input: call.input } })
    return { decision: 'deny', reason: `${message}. The tool call was not run.` }
  }

  #blocked(match: WafMatch, sessionId: string, tool?: BlockedTool): void {
    this.#options.log.warn(
      { session_id: sessionId, rule_id: match.rule_id, category: match.category, target: match.target, tool: tool?.name, excerpt: match.excerpt },
      tool ? 'WAF denied a tool call' : 'WAF blocked a prompt',
    )
    try {
      this.#options.onBlock?.(match, sessionId, tool)
    } catch (err) {
      this.#options.log.error({ session_id: sessionId, err }, 'WAF block listener failed')
    }
  }

  #logWarnings(result: InspectResult, sessionId: string, what: string): void {
    for (const match of result.matches) {
      if (match.level === 'warn')
        this.#options.log.info({ session_id: sessionId, rule_id: match.rule_id, category: match.category, excerpt: match.excerpt, input: what }, 'WAF warning')
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
