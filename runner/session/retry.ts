/**
 * Whether a turn whose CLI process failed it runs once more in a new process.
 * Decided on what the engine recognised (runner/engine: `conversationNotFound`,
 * `conversationInUse`), never on the CLI's wording.
 */

/** What a CLI process showed of itself by the time it failed a turn or exited. */
export interface ProcessFacts {
  /** Started with --resume rather than --session-id. */
  resumed: boolean
  /** A turn has ended in this process. */
  finishedATurn: boolean
  /** It printed something since the turn's prompt was written to it. */
  heardSinceSend: boolean
}

/** Run the turn again in a new process; `resume`: whether that process resumes the stored conversation (absent: as it would have). */
export type RetryDecision = { retry: false } | { retry: true; resume?: boolean }

const NO_RETRY: RetryDecision = { retry: false }

/**
 * Whether a resumed CLI had no conversation to resume, as its first answer:
 * the marker outlived the CLI's store (another HOME, a wiped disk, a CLI that
 * loses it). The conversation cannot be continued; a new one has to start.
 */
export function conversationLost(process: ProcessFacts, conversationNotFound: boolean): boolean {
  return conversationNotFound && process.resumed && !process.finishedATurn
}

/** A turn the CLI reported as failed. Retried once, without --resume, when the conversation was lost. */
export function retryAfterFailedTurn(process: ProcessFacts, conversationNotFound: boolean, retried: boolean): RetryDecision {
  if (retried || !conversationLost(process, conversationNotFound)) return NO_RETRY
  return { retry: true, resume: false }
}

/**
 * The process serving a turn exited before the turn ended. Without a word
 * about the turn it never took the prompt (it was dying already, or refused to
 * start): retried, resuming when a new conversation was refused because the
 * CLI has it stored already (the marker was lost).
 */
export function retryAfterExit(process: ProcessFacts, conversationInUse: boolean, retried: boolean): RetryDecision {
  if (retried || process.heardSinceSend) return NO_RETRY
  return !process.resumed && conversationInUse ? { retry: true, resume: true } : { retry: true }
}
