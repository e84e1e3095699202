import { z } from 'zod'

/**
 * What an OpenCode client (the TUI, `opencode attach`) asks about the server
 * it attaches to, in OpenCode 1.18's shapes (its GET /doc). The answers
 * describe this service: one provider (the engine), one agent, no project.
 */
export const PathInfo = z.object({ home: z.string(), state: z.string(), config: z.string(), worktree: z.string(), directory: z.string() })
export type PathInfo = z.output<typeof PathInfo>

export const Project = z.object({
  id: z.string(),
  worktree: z.string(),
  time: z.object({ created: z.number().int().nonnegative(), updated: z.number().int().nonnegative() }),
  sandboxes: z.array(z.string()),
})
export type Project = z.output<typeof Project>

const Modalities = z.object({ text: z.boolean(), audio: z.boolean(), image: z.boolean(), video: z.boolean(), pdf: z.boolean() })

export const Model = z.object({
  id: z.string(),
  providerID: z.string(),
  api: z.object({ id: z.string(), url: z.string(), npm: z.string() }),
  name: z.string(),
  capabilities: z.object({
    temperature: z.boolean(),
    reasoning: z.boolean(),
    attachment: z.boolean(),
    toolcall: z.boolean(),
    input: Modalities,
    output: Modalities,
    interleaved: z.boolean(),
  }),
  cost: z.object({ input: z.number(), output: z.number(), cache: z.object({ read: z.number(), write: z.number() }) }),
  limit: z.object({ context: z.number(), output: z.number() }),
  status: z.enum(['alpha', 'beta', 'deprecated', 'active']),
  options: z.record(z.string(), z.unknown()),
  headers: z.record(z.string(), z.string()),
  release_date: z.string(),
})
export type Model = z.output<typeof Model>

export const Provider = z.object({
  id: z.string(),
  name: z.string(),
  source: z.enum(['env', 'config', 'custom', 'api']),
  env: z.array(z.string()),
  options: z.record(z.string(), z.unknown()),
  models: z.record(z.string(), Model),
})
export type Provider = z.output<typeof Provider>

/** GET /config/providers. */
export const ConfigProviders = z.object({ providers: z.array(Provider), default: z.record(z.string(), z.string()) })
export type ConfigProviders = z.output<typeof ConfigProviders>

/** GET /provider. */
export const ProviderList = z.object({ all: z.array(Provider), default: z.record(z.string(), z.string()), connected: z.array(z.string()) })
export type ProviderList = z.output<typeof ProviderList>

export const Agent = z.object({
  name: z.string(),
  description: z.string(),
  mode: z.enum(['subagent', 'primary', 'all']),
  native: z.boolean(),
  permission: z.array(z.object({ permission: z.string(), pattern: z.string(), action: z.enum(['allow', 'deny', 'ask']) })),
  options: z.record(z.string(), z.unknown()),
})
export type Agent = z.output<typeof Agent>

export const Capabilities = z.object({ backgroundSubagents: z.boolean() })
export const ConsoleState = z.object({ consoleManagedProviders: z.array(z.string()), switchableOrgCount: z.number().int().nonnegative() })
export const Health = z.object({ healthy: z.literal(true), version: z.string() })
