/** The gateway: the client surfaces (native WebSocket and SSE, OpenCode REST + SSE, the chat webhook) on one fastify server. */
export { buildGateway } from './server.ts'
export type { GatewayOptions, HttpTimeouts, SecurityOptions } from './server.ts'
export { AuthConfigSchema } from './auth/config.ts'
export type { AuthConfig } from './auth/config.ts'
export { ChatConfigSchema } from './chat/config.ts'
export type { ChatConfig, ChatConfigInput, ChatSettings } from './chat/config.ts'
export { LimitsConfigSchema } from './limits/config.ts'
export type { LimitsConfig } from './limits/config.ts'
// The ports the layers above implement: the gateway reports through the observer and asks the lifecycle; routes declare their access.
export type { GatewayObserver } from './observer.ts'
export type { GatewayLifecycle } from './lifecycle.ts'
export type { RouteAccess } from './route-config.ts'
