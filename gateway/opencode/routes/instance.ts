import type { FastifyInstance } from 'fastify'
import { DEFAULT_PROJECT } from '../session-info.ts'
import type { Agent, ConfigProviders, PathInfo, Project, Provider, ProviderList } from '../schemas/instance.ts'

export interface InstanceDeps {
  version: string
  /** The sandbox base (`session.work_dir`); `/` when the gateway does not know it. */
  workBase: string | undefined
  provider: string
  /** The model that stands for the default engine. */
  model: string
  /** The configured engines' names (each one is a model of the provider); none known: only the default. */
  engines(): Promise<string[]>
  agent: string
  /** When the gateway started (the project's time). */
  startedAt: number
}

/**
 * The agent's rules as OpenCode states them: every call `ask`, meaning it may be
 * put to a person. The gateway cannot tell per engine whether it asks (a
 * runner's `version` answer does not say), so it claims the careful case: an
 * engine with `approval: auto` never asks, and a client just never sees a request.
 */
export const AGENT_PERMISSION: Agent['permission'] = [{ permission: '*', pattern: '*', action: 'ask' }]

/** Context window and output limit reported for the engine's model: Claude's, the engine being Claude Code. */
const CONTEXT_TOKENS = 200_000
const OUTPUT_TOKENS = 32_000

/**
 * The read-only routes an OpenCode client asks about the server it attaches to
 * (`opencode attach` asks them all before it draws). They describe this
 * service as it is: one provider and model (the engine, whose own model
 * config decides), one agent whose tool calls may be put to a person
 * (AGENT_PERMISSION), no project, no console, no background subagents. What the
 * gateway cannot see (the CLI's MCP servers, the sandbox's git state, todos
 * and file changes) has no route: 404, which the TUI tolerates.
 */
export function instanceRoutes(app: FastifyInstance, deps: InstanceDeps): void {
  const base = deps.workBase ?? '/'
  const provider = async () => engineProvider(deps.provider, [deps.model, ...(await deps.engines())])
  const defaults = { [deps.provider]: deps.model }

  app.get('/global/health', async () => ({ healthy: true as const, version: deps.version }))
  app.get('/path', async (): Promise<PathInfo> => ({ home: base, state: base, config: base, worktree: base, directory: base }))
  app.get(
    '/project/current',
    async (): Promise<Project> => ({ id: DEFAULT_PROJECT, worktree: base, time: { created: deps.startedAt, updated: deps.startedAt }, sandboxes: [] }),
  )
  app.get('/config/providers', async (): Promise<ConfigProviders> => ({ providers: [await provider()], default: defaults }))
  app.get('/provider', async (): Promise<ProviderList> => ({ all: [await provider()], default: defaults, connected: [deps.provider] }))
  app.get(
    '/agent',
    async (): Promise<Agent[]> => [
      {
        name: deps.agent,
        description:
          "Runs each prompt in the service's agent CLI. A tool call may wait for a person's yes (permission.asked) when the engine asks (engine.approval: ask); its rules, the CLI's settings and the WAF decide the others.",
        mode: 'primary',
        native: true,
        permission: AGENT_PERMISSION,
        options: {},
      },
    ],
  )
  app.get('/experimental/capabilities', async () => ({ backgroundSubagents: false }))
  app.get('/experimental/console', async () => ({ consoleManagedProviders: [], switchableOrgCount: 0 }))
  // Nothing of these runs in the service: no slash commands, language servers or formatters, and the
  // engine's provider needs no login (the service's API keys are the only credentials).
  app.get('/command', async () => [])
  app.get('/lsp', async () => [])
  app.get('/formatter', async () => [])
  app.get('/provider/auth', async () => ({}))
}

/**
 * The service as an OpenCode provider whose models are its engines: `default`
 * (the default engine) and one per configured engine, so a client picks the
 * agent CLI a new session runs as it would pick a model.
 */
function engineProvider(id: string, models: readonly string[]): Provider {
  return {
    id,
    name: 'Agent Runtime',
    source: 'custom',
    env: [],
    options: {},
    models: Object.fromEntries(models.map((model) => [model, engineModel(id, model)])),
  }
}

function engineModel(providerID: string, model: string): Provider['models'][string] {
  const text = { text: true, audio: false, image: false, video: false, pdf: false }
  return {
    id: model,
    providerID,
    api: { id: model, url: '', npm: '' },
    name: model === 'default' ? 'The default engine' : `Engine ${model}`,
    capabilities: { temperature: false, reasoning: true, attachment: false, toolcall: true, input: text, output: text, interleaved: false },
    cost: { input: 0, output: 0, cache: { read: 0, write: 0 } },
    limit: { context: CONTEXT_TOKENS, output: OUTPUT_TOKENS },
    status: 'active',
    options: {},
    headers: {},
    release_date: '',
  }
}
