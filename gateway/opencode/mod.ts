/** The OpenCode-compatible REST + SSE layer. */
export { registerOpencode, DEFAULT_AGENT, DEFAULT_MODEL, DEFAULT_PROVIDER } from './plugin.ts'
export type { OpencodeDeps } from './plugin.ts'
export { DocumentSessionStore } from './session-store.ts'
export type { OpencodeSessionRecord, OpencodeSessionStore } from './session-store.ts'
