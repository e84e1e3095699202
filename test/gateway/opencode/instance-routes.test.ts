import Fastify from 'fastify'
import { describe, expect, it } from 'vitest'
import type { z } from 'zod'
import { instanceRoutes } from '../../../gateway/opencode/routes/instance.ts'
import { Agent, Capabilities, ConfigProviders, ConsoleState, Health, PathInfo, Project, ProviderList } from '../../../gateway/opencode/schemas/instance.ts'

async function app(workBase: string | undefined, engines: string[] = []) {
  const server = Fastify()
  instanceRoutes(server, {
    version: '0.1.0',
    workBase,
    provider: 'agent-runtime',
    model: 'default',
    engines: async () => engines,
    agent: 'build',
    startedAt: 1_000,
  })
  await server.ready()
  return server
}

describe('opencode instance routes - what `opencode attach` asks before it draws', () => {
  it.each<[string, z.ZodType]>([
    ['/global/health', Health],
    ['/path', PathInfo],
    ['/project/current', Project],
    ['/config/providers', ConfigProviders],
    ['/provider', ProviderList],
    ['/agent', Agent.array()],
    ['/experimental/capabilities', Capabilities],
    ['/experimental/console', ConsoleState],
  ])('instance - GET %s answers 200 in OpenCode 1.18 shape', async (url, schema) => {
    const server = await app('/srv/sandboxes')
    const answer = await server.inject({ url })
    expect(answer.statusCode).toBe(200)
    expect(() => schema.parse(answer.json())).not.toThrow()
  })

  it('instance - the engine is the one provider and model, and the default the TUI preselects', async () => {
    const server = await app('/srv/sandboxes')
    const providers = (await server.inject({ url: '/config/providers' })).json()
    expect(providers.default).toEqual({ 'agent-runtime': 'default' })
    expect(providers.providers.map((p: { id: string }) => p.id)).toEqual(['agent-runtime'])
    expect(Object.keys(providers.providers[0].models)).toEqual(['default'])
    expect((await server.inject({ url: '/provider' })).json()).toMatchObject({ connected: ['agent-runtime'] })
  })

  it('instance - each configured engine is a model of the provider, after `default`', async () => {
    const server = await app('/srv/sandboxes', ['claude', 'gemini'])
    for (const url of ['/config/providers', '/provider']) {
      const body = (await server.inject({ url })).json()
      const provider = (body.providers ?? body.all)[0]
      expect(Object.keys(provider.models)).toEqual(['default', 'claude', 'gemini'])
      expect(provider.models.gemini).toMatchObject({ id: 'gemini', providerID: 'agent-runtime', name: 'Engine gemini' })
    }
  })

  it.each([
    ['/srv/sandboxes', '/srv/sandboxes'],
    [undefined, '/'],
  ])('instance - the directory is the sandbox base (%s)', async (workBase, expected) => {
    const server = await app(workBase)
    expect((await server.inject({ url: '/path' })).json()).toEqual({
      home: expected,
      state: expected,
      config: expected,
      worktree: expected,
      directory: expected,
    })
    expect((await server.inject({ url: '/project/current' })).json()).toEqual({
      id: 'global',
      worktree: expected,
      time: { created: 1_000, updated: 1_000 },
      sandboxes: [],
    })
  })

  it.each([
    ['/command', []],
    ['/lsp', []],
    ['/formatter', []],
    ['/provider/auth', {}],
  ])('instance - GET %s: none in the service', async (url, expected) => {
    expect((await (await app(undefined)).inject({ url })).json()).toEqual(expected)
  })

  it('instance - the agent does not claim every tool is allowed: any call may be put to a person (ask)', async () => {
    const [agent] = (await (await app(undefined)).inject({ url: '/agent' })).json()
    expect(agent.permission).toEqual([{ permission: '*', pattern: '*', action: 'ask' }])
    expect(agent.description).toContain('engine.approval')
  })

  it.each(['/mcp', '/vcs', '/experimental/resource', '/session/ses_1/todo'])('instance - GET %s: not known to the gateway, no route (404)', async (url) => {
    expect((await (await app(undefined)).inject({ url })).statusCode).toBe(404)
  })
})
