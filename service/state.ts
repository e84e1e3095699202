import type { Logger } from 'pino'
import { NatsBus, type MemoryBus } from '../bus/mod.ts'
import { openState, type OpenStateOptions, type State, type StateStore } from '../state/mod.ts'
import { ConfigError } from './config/load.ts'
import type { Config } from './config/schema.ts'
import { stateSettings } from './config/slices.ts'

/** Opens the state `state.backend` names on the service's bus: `auto` = memory on the in-process bus, JetStream on NATS. */
export function openServiceState(bus: MemoryBus | NatsBus, config: Config, log: Logger, options: OpenStateOptions = {}): Promise<State> {
  return openState(stateStore(bus, config.state.backend), stateSettings(config), log, options)
}

function stateStore(bus: MemoryBus | NatsBus, backend: Config['state']['backend']): StateStore {
  if (backend === 'memory' || (backend === 'auto' && !(bus instanceof NatsBus))) return { memory: bus }
  if (!(bus instanceof NatsBus)) throw new ConfigError('config: state.backend: jetstream needs the NATS bus (gateway or runner mode)')
  return { connection: bus.connection }
}
