import swagger from '@fastify/swagger'
import type { FastifyInstance, RouteOptions } from 'fastify'
import { SERVICE_VERSION } from '../../contract/version.ts'
import { asyncApiDocument } from './asyncapi.ts'
import { routeSchemaToJson } from './json-schema.ts'

/** Where the documents are served. */
export const OPENAPI_PATH = '/openapi.json'
export const ASYNCAPI_PATH = '/asyncapi.json'

/** Which part of the service a path belongs to, as the document's tags name them. Pure. */
export function tagOf(url: string): string {
  if (url.startsWith('/health') || url === '/metrics') return 'operations'
  if (url.startsWith('/v1/chat/')) return 'chat platform'
  if (url === OPENAPI_PATH || url === ASYNCAPI_PATH) return 'documents'
  if (url.startsWith('/v1/sessions')) return 'sessions'
  if (url.startsWith('/v1/') || url.startsWith('/ws/')) return 'native'
  return 'opencode'
}

/**
 * The API's documents: OpenAPI 3.1 at `GET /openapi.json`, AsyncAPI 3.0 of the WebSocket at `GET /asyncapi.json`.
 * The OpenAPI document, made by @fastify/swagger from the routes as
 * registered: every route's zod schemas (the ones fastify validates with, gateway/route-schemas.ts)
 * become JSON Schema; a route without schemas is listed with its path and method. Open routes
 * (probes, the chat callback) need no key. Registered before the routes, whose registration it
 * watches.
 */
export async function registerApiDocs(app: FastifyInstance): Promise<void> {
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Agent Runtime Service',
        version: SERVICE_VERSION,
        description: `Sessions of AI coding-agent CLIs in sandboxes. The native WebSocket's frames and events are described in ${ASYNCAPI_PATH} (AsyncAPI 3.0).`,
      },
      components: {
        securitySchemes: {
          bearer: { type: 'http', scheme: 'bearer', description: 'Authorization: Bearer <API key>' },
          apiKey: { type: 'apiKey', in: 'header', name: 'x-api-key' },
        },
      },
      security: [{ bearer: [] }, { apiKey: [] }],
    },
    transform: ({ schema, url, route }) => ({ schema: describeRoute(schema as Record<string, unknown> | undefined, url, route as RouteOptions), url }),
  })
  app.get(OPENAPI_PATH, { schema: { summary: 'This document (OpenAPI 3.1)' } }, async () => app.swagger())
  let asyncApi: Record<string, unknown> | undefined
  app.get(ASYNCAPI_PATH, { schema: { summary: 'The native WebSocket’s frames and events (AsyncAPI 3.0)' } }, async () => (asyncApi ??= asyncApiDocument()))
}

/** A route's entry: its schemas as JSON Schema, its tag, and for open routes no security. */
function describeRoute(schema: Record<string, unknown> | undefined, url: string, route: RouteOptions): Record<string, unknown> {
  const described: Record<string, unknown> = routeSchemaToJson(schema ?? {})
  described.tags ??= [tagOf(url)]
  if (route.config?.access === 'open') described.security = []
  if (route.config?.websocket === true) {
    described.summary ??= `The native WebSocket: send an Upgrade: websocket request (frames and events: ${ASYNCAPI_PATH})`
    described.response ??= { 101: { type: 'null', description: 'Switching Protocols: the socket speaks the native protocol' } }
  }
  return described
}
