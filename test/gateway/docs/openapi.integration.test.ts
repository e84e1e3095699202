import { validate } from '@readme/openapi-parser'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startStack, type Stack } from '../../fixtures/stack.ts'

/** The documents as the real service serves them (dev mode), with its real probes and metrics. */
describe('openapi - the running service', () => {
  let stack: Stack
  beforeAll(async () => {
    stack = await startStack({ auth: { api_keys: ['docs-key'] } })
  })
  afterAll(() => stack.close())

  it('openapi - GET /openapi.json needs the key, validates, and lists the probes (open) and /metrics (keyed)', async () => {
    expect((await fetch(`${stack.url}/openapi.json`)).status).toBe(401)
    const document = (await (await fetch(`${stack.url}/openapi.json`, { headers: { 'x-api-key': 'docs-key' } })).json()) as any
    expect((await validate(structuredClone(document))).valid).toBe(true)
    for (const probe of ['/health', '/health/live', '/health/ready']) expect(document.paths[probe].get.security, probe).toEqual([])
    expect(document.paths['/metrics'].get.security).toBeUndefined()
    expect(Object.keys(document.paths)).toEqual(expect.arrayContaining(['/v1/sessions', '/ws/v1/agent', '/session', '/asyncapi.json']))
  })

  it('openapi - GET /asyncapi.json serves the WebSocket document', async () => {
    const answer = await fetch(`${stack.url}/asyncapi.json`, { headers: { 'x-api-key': 'docs-key' } })
    expect(answer.status).toBe(200)
    expect(await answer.json()).toMatchObject({ asyncapi: '3.0.0', channels: { agent: { address: '/ws/v1/agent' } } })
  })
})
