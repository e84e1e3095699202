import type { ToolGate } from '../../waf/mod.ts'
import type { Approver } from './approver.ts'

/**
 * What the runner needs from an agent CLI, whichever CLI it is. An engine
 * starts one long-lived process per session and turns its output into
 * EngineOutput items; the runner turns those into service events.
 */

/** One thing the CLI said, already understood. */
export type EngineOutput =
  /** The CLI's own conversation id, model and version, once known; the runner keeps the id to resume the conversation with. */
  | { kind: 'init'; cliSessionId?: string; model?: string; version?: string }
  | { kind: 'thinking'; text: string; messageId?: string }
  | { kind: 'text'; text: string; messageId?: string }
  /** Text the model added to the thinking or text block it is writing; the whole block follows as `thinking` or `text`. */
  | { kind: 'thinking_delta'; text: string; messageId?: string }
  | { kind: 'text_delta'; text: string; messageId?: string }
  | { kind: 'tool_use'; id: string; name: string; input: unknown; messageId?: string }
  | { kind: 'tool_result'; toolUseId: string; content: string; isError: boolean }
  | { kind: 'result'; result: TurnResult }
  /** A line that is not JSON, or JSON of no known shape worth reporting. */
  | { kind: 'noise'; line: string }

/** The CLI's end-of-turn record. */
export interface TurnResult {
  isError: boolean
  /** `success`, `error_during_execution`, `error_max_turns`, … */
  subtype: string
  text: string
  durationMs: number
  durationApiMs: number
  numTurns: number
  /** The CLI reports cost summed over its conversation; the runner takes differences. */
  cumulativeCostUsd: number
  inputTokens: number
  outputTokens: number
  cacheReadInputTokens: number
  cacheCreationInputTokens: number
  model?: string
  /** HTTP status of a failed model API call, when that ended the turn. */
  apiErrorStatus?: number
  errors?: string[]
  /** A failed turn of a resumed CLI that has no stored conversation under the id (its transcript is gone). */
  conversationNotFound?: true
}

export interface EngineStartOptions {
  /** The sandbox directory; the CLI runs there. */
  cwd: string
  /** The service's id for the CLI's conversation (a UUID derived from the session id). */
  cliSessionId: string
  /**
   * The id the CLI itself gave the conversation, as an earlier process of the
   * session reported it (`init.cliSessionId`), when that differs from
   * `cliSessionId`: CLIs that name their own conversations (a Codex thread, an
   * ACP session, an OpenCode session) resume this one.
   */
  conversationId?: string | undefined
  /** Continue the CLI's stored conversation instead of starting it. */
  resume: boolean
  /**
   * The conversation's instructions (its system prompt): a new conversation
   * starts with them, a resumed one has them already (prompt.ts); a turn that
   * asks for others carries them in its prompt.
   */
  instructions?: string | undefined
  /** The full environment of the process (nothing else is inherited). */
  env: Record<string, string>
  /** Decides every tool call before the CLI runs it (the WAF); none: the CLI's own rules only. */
  toolGate?: ToolGate | undefined
  /** Asks a person about the tool calls the CLI would ask about, and the CLI's questions (engine.approval: ask); none: nothing is asked. */
  approver?: Approver | undefined
  /**
   * A directory the runner owns and the CLI can read but not change (read-only
   * in the session sandbox), for sockets the CLI's hooks call back on: `host`
   * is the runner's path, `inside` the one the CLI sees. None: the engine has no such place.
   */
  controlDir?: { host: string; inside: string } | undefined
  /** Turns the CLI's command line into the one that starts it (the session sandbox); none: run it as it is. */
  wrap?: ((command: string, args: readonly string[]) => { command: string; args: string[]; cwd?: string }) | undefined
}

export interface EngineExit {
  code: number | null
  signal: string | null
  /** The CLI refused to start a new conversation under an id it has stored already. */
  conversationInUse?: true
}

/** A running agent CLI process. */
export interface EngineProcess {
  readonly pid: number
  /**
   * Starts one user turn. `instructions`: the ones the turn asks for; when they
   * differ from the conversation's, the engine sends them with the prompt (TurnPrompts in prompt.ts).
   */
  send(prompt: string, instructions?: string | undefined): void
  /** Asks the CLI to end the running turn without exiting. */
  interrupt(): void
  /** Closes stdin: the CLI finishes and exits. */
  endInput(): void
  readonly exited: Promise<EngineExit>
}

export interface EngineHandlers {
  onOutput(output: EngineOutput): void
  /** A stdout line longer than the engine's limit was dropped. */
  onOverlong(bytes: number): void
  /** Anything the CLI printed on stderr, line by line. */
  onStderr(line: string): void
}

export interface Engine {
  readonly name: string
  /** The CLI's version string, e.g. `2.1.330 (Claude Code)`. */
  version(): Promise<string>
  /** Resolves once the process runs; rejects (ENGINE_START_FAILED) when it cannot start. */
  start(options: EngineStartOptions, handlers: EngineHandlers): Promise<EngineProcess>
}
