import type { PermissionRequest, QuestionRequest } from '../../../contract/mod.ts'

/** A permission request or question of a chat session that waits for the person's next text. */
export type OpenRequest = { kind: 'permission'; request: PermissionRequest } | { kind: 'question'; request: QuestionRequest }

/** How each decision reads in a conversation, in the words the numbered message uses. */
export const DECISION_WORDS = { allow_once: 'allow once', allow_always: 'allow for this session', deny: 'deny' } as const
