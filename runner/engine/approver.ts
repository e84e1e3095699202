import type { QuestionItem } from '../../contract/mod.ts'
import type { ToolCall } from '../../waf/mod.ts'

/**
 * The port an engine asks when its CLI wants a person's yes for a tool call or
 * asks the person a question (engine.approval: ask). The session's steering
 * desk implements it (runner/steering/desk.ts). An abort (the CLI withdrew the
 * request, the turn was stopped) settles the ask as a deny or a reject.
 */
export interface Approver {
  permission(ask: PermissionAsk, signal?: AbortSignal): Promise<PermissionAnswer>
  question(ask: QuestionAsk, signal?: AbortSignal): Promise<QuestionAnswer>
}

export interface PermissionAsk {
  call: ToolCall
  /** One line for a person; none: made from the call. */
  title?: string
  /** What the CLI itself offers to allow for good (Claude Code's permission_suggestions addRules). */
  suggestion?: { toolName: string; ruleContent?: string }
}

/** `input`: the input the tool runs with (unchanged unless the person edited it). */
export type PermissionAnswer = { behavior: 'allow'; input: unknown } | { behavior: 'deny'; message: string }

export interface QuestionAsk {
  toolUseId?: string
  questions: QuestionItem[]
}

/** One list of labels per question, in order. */
export type QuestionAnswer = { behavior: 'answer'; answers: string[][] } | { behavior: 'reject'; message: string }
