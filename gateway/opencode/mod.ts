/** The OpenCode-compatible REST + SSE layer and the quick-start chat route. */
export { registerOpencode, DEFAULT_AGENT, DEFAULT_MODEL, DEFAULT_PROVIDER } from './plugin.ts'
export type { OpencodeDeps } from './plugin.ts'
export { DocumentSessionRegistry } from './registry.ts'
export type { SessionRecord, SessionRegistry } from './registry.ts'
