import { validate } from '@readme/openapi-parser'
import type { FastifyInstance } from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ChatConfigSchema } from '../../../gateway/chat/mod.ts'
import { tagOf } from '../../../gateway/docs/openapi.ts'
import { gatewayUnderTest, type GatewayUnderTest } from '../../fixtures/gateway.ts'

/**
 * Every method and path the app serves, read from fastify's own route tree (`printRoutes`),
 * not from the document: `/session/:id (GET, HEAD)` → `GET /session/{id}`. HEAD (fastify adds
 * one per GET) and the CORS preflight route `*` are not API operations.
 */
function registeredOperations(app: FastifyInstance): string[] {
  const operations: string[] = []
  const prefixes: string[] = []
  for (const line of app.printRoutes({ commonPrefix: false }).split('\n')) {
    const match = /^([│ ]*)[├└]── (\S+) \(([A-Z, ]+)\)$/.exec(line) ?? /^([│ ]*)[├└]── (\S+)$/.exec(line)
    if (!match) continue
    const depth = match[1]!.length / 4
    prefixes.length = depth
    const path = (prefixes.join('') + match[2]!).replaceAll(/:(\w+)/g, '{$1}')
    prefixes.push(match[2]!)
    for (const method of match[3]?.split(', ') ?? []) if (method !== 'HEAD' && path !== '*') operations.push(`${method} ${path}`)
  }
  return operations.sort()
}

function documentedOperations(document: { paths: Record<string, Record<string, unknown>> }): string[] {
  return Object.entries(document.paths)
    .flatMap(([path, item]) => Object.keys(item).map((method) => `${method.toUpperCase()} ${path}`))
    .sort()
}

let gateway: GatewayUnderTest
let document: any
beforeAll(async () => {
  const chat = ChatConfigSchema.parse({ enabled: true, api_url: 'http://127.0.0.1:1', app_key: 'k', app_secret: 's', callback_token: 't' })
  gateway = await gatewayUnderTest({ chat })
  const answer = await gateway.app.inject({ method: 'GET', url: '/openapi.json' })
  expect(answer.statusCode).toBe(200)
  document = answer.json()
})
afterAll(() => gateway.close())

describe('openapi - the document of every route', () => {
  it('openapi - is a valid OpenAPI 3.1 document (@readme/openapi-parser)', async () => {
    expect(document.openapi).toBe('3.1.0')
    const result = await validate(structuredClone(document))
    expect(result.valid ? [] : result.errors, JSON.stringify(result)).toEqual([])
    expect(result.valid).toBe(true)
    // The validator does refuse a broken document (this test can fail).
    expect((await validate({ ...structuredClone(document), info: { title: 'no version' } })).valid).toBe(false)
  })

  it('openapi - lists every registered route with its methods (native, sessions, OpenCode, chat callback, documents)', () => {
    const registered = registeredOperations(gateway.app)
    expect(registered).toEqual(
      expect.arrayContaining([
        'GET /v1/sessions',
        'DELETE /v1/sessions/{id}',
        'POST /v1/agent/chat',
        'GET /ws/v1/agent',
        'GET /session',
        'POST /v1/chat/callback',
        'GET /openapi.json',
      ]),
    )
    expect(documentedOperations(document)).toEqual(registered)
  })

  it("openapi - the directory's schemas are the routes' zod schemas: query parameters, the answer, the error shape", () => {
    const list = document.paths['/v1/sessions'].get
    expect(list.parameters.map((parameter: { name: string; in: string }) => `${parameter.in}:${parameter.name}`).sort()).toEqual([
      'query:cursor',
      'query:limit',
      'query:state',
    ])
    const session = list.responses['200'].content['application/json'].schema.properties.sessions.items
    expect(session.required).toEqual(expect.arrayContaining(['session_id', 'state', 'owner', 'work_dir', 'created_at', 'last_active', 'queued_turns', 'stats']))
    expect(list.responses['404'].content['application/json'].schema.required).toEqual(['code', 'message'])
    const events = document.paths['/v1/sessions/{id}/events'].get.responses['200'].content
    expect(Object.keys(events).sort()).toEqual(['application/json', 'text/event-stream'])
    expect(document.paths['/v1/agent/chat'].post.requestBody.content['application/json'].schema.required).toEqual(['message'])
  })

  it('openapi - open routes need no key; the others name both key carriers', () => {
    expect(document.paths['/v1/chat/callback'].post.security).toEqual([])
    expect(document.paths['/v1/sessions'].get.security).toBeUndefined()
    expect(document.security).toEqual([{ bearer: [] }, { apiKey: [] }])
  })

  it.each([
    ['/health/ready', 'operations'],
    ['/metrics', 'operations'],
    ['/v1/chat/callback', 'chat platform'],
    ['/v1/sessions/{id}', 'sessions'],
    ['/v1/agent/chat', 'native'],
    ['/ws/v1/agent', 'native'],
    ['/session/{id}/message', 'opencode'],
    ['/openapi.json', 'documents'],
  ])('openapi - %s is tagged %s', (path, tag) => {
    expect(tagOf(path)).toBe(tag)
  })
})
