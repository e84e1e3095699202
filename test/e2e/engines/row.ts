/**
 * One row of the engine conformance suite (conformance.test.ts): a real agent
 * CLI, run offline against a fake of its provider's API that follows the
 * shared script (test/fakes/model-script.ts). Adding an engine means adding a
 * row; every row runs the same scenarios with the same assertions.
 */

/** An `engines:` entry of the service's config (runner/engine/config.ts). */
export interface NamedEngineConfig {
  name: string
  type: string
  command: string
  args?: string[]
  env?: Record<string, string>
  model?: string
  [option: string]: unknown
}

/** The CLI and its fake, running. */
export interface EngineFixture {
  /** The `engines:` entry that runs this CLI against the fake (its env holds a private HOME). */
  config: NamedEngineConfig
  /** Whether the model was sent this text in any request (a prompt, a tool result, a WAF reason). */
  modelSaw(text: string): boolean
  stop(): Promise<void>
}

export interface EngineRow {
  /** The engine's name in the config, and the row's name in the test output. */
  name: string
  /**
   * How the CLI takes steering (engine.approval: ask; test/e2e/engines/steering.test.ts); none: it
   * cannot ask a person, and the README says so.
   */
  steering?: {
    /** The agent can ask the person questions (Claude Code's AskUserQuestion). */
    questions: boolean
    /** A deny's message reaches the model. */
    denyMessage: boolean
  }
  setup(): Promise<EngineFixture>
  /** What this CLI shows of a turn; the suite asserts exactly these. */
  shows: {
    /** The CLI prints the model's thinking (Gemini's headless output, say, does not). */
    thinking: boolean
    /** The tool's output reaches the client in tool_result (Gemini over ACP sends none). */
    toolOutput: boolean
    /** The CLI reports a cost in dollars. */
    cost: boolean
    /** The agent is told why the WAF denied a tool call (the rule's reason reaches the model); default true. */
    denyReason?: boolean
    /** The CLI reports the turn's tokens; default true. False is asserted too: zeros. */
    tokens?: boolean
    /**
     * A new process continues the conversation from the CLI's store; default true. False is
     * asserted too (a known upstream defect): the next turn starts a fresh conversation.
     */
    resumes?: boolean
  }
}
