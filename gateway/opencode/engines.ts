import type { Runners } from '../runners.ts'
import type { ModelRef } from './schemas/message.ts'

/**
 * Engines as OpenCode models: the service is one provider, and each of its
 * engines is a model of it (`default` stands for the default engine), so an
 * OpenCode client picks the agent CLI of a new session as it picks a model.
 */

/** How long the engines' names, as the runners report them, are reused. */
const NAMES_TTL_MS = 30_000

/**
 * The engine a prompt's model names: the model of the service's own provider
 * (other providers' models are the client's own settings, not ours: they pick
 * nothing, as before engines had names); `default` names none.
 */
export function engineOfModel(model: ModelRef | undefined, provider: string, defaultModel: string): string | undefined {
  if (model === undefined || model.providerID !== provider || model.modelID === defaultModel) return undefined
  return model.modelID
}

/** The configured engines' names, from a runner's `version` answer; none while no runner answers. */
export function engineNames(runners: Runners, now: () => number = Date.now): () => Promise<string[]> {
  let cached: { names: string[]; at: number } | undefined
  return async () => {
    if (cached && now() - cached.at < NAMES_TTL_MS) return cached.names
    const names = await runners.send({ type: 'version' }).then(
      (reply) => (reply.engines ?? []).map((engine) => engine.name),
      () => undefined,
    )
    if (names === undefined) return cached?.names ?? []
    cached = { names, at: now() }
    return names
  }
}
