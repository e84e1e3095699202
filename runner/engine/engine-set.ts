import { ServiceError, type EngineStatus } from '../../contract/mod.ts'
import type { SessionSandbox } from '../sandbox-exec/mod.ts'
import type { ApprovalPolicy } from '../steering/policy.ts'
import type { Engine } from './engine.ts'

/** One configured engine, ready to start sessions' CLIs: the adapter, its environment and its sandbox. */
export interface EngineSlot {
  /** The configured name (`engines[].name`): what a client names and a session keeps. */
  name: string
  /** The adapter type (claude, acp, codex, opencode). */
  type: string
  engine: Engine
  /** `engines[].env` with what the service adds (runner/process/env.ts adds the allowed host variables). */
  env: Record<string, string>
  /** The kernel sandbox its CLIs start in, allowing this engine's model API. */
  sandbox: SessionSandbox
  /** Whether its tool calls go to a person, and the rules that decide first (engine.approval*); none: nothing is asked. */
  approval?: ApprovalPolicy | undefined
}

/** The engines a runner can start, by name, and the one a session runs when it names none. */
export class EngineSet {
  readonly #slots: Map<string, EngineSlot>
  readonly default: EngineSlot

  constructor(slots: readonly EngineSlot[], defaultName: string) {
    this.#slots = new Map(slots.map((slot) => [slot.name, slot]))
    const fallback = this.#slots.get(defaultName)
    if (!fallback) throw new Error(`the default engine "${defaultName}" is not configured`)
    this.default = fallback
  }

  get names(): string[] {
    return [...this.#slots.keys()]
  }

  [Symbol.iterator](): IterableIterator<EngineSlot> {
    return this.#slots.values()
  }

  /** The engine named (none: the default); an unknown name is a BAD_REQUEST that lists the configured ones. */
  get(name: string | undefined): EngineSlot {
    if (name === undefined) return this.default
    const slot = this.#slots.get(name)
    if (!slot) throw new ServiceError('BAD_REQUEST', `unknown engine "${name}"; configured engines: ${this.names.join(', ')}`)
    return slot
  }

  /** Every engine's version, or why it has none (its CLI is missing or fails). */
  status(): Promise<EngineStatus[]> {
    return Promise.all(
      [...this.#slots.values()].map(({ name, type, engine }) =>
        engine.version().then(
          (version): EngineStatus => ({ name, type, version }),
          (err: unknown): EngineStatus => ({ name, type, error: (err as Error).message }),
        ),
      ),
    )
  }
}
