/** Session state: the registry, runner leases and the event log, in memory (dev) or JetStream. */
import path from 'node:path'
import type { Logger } from 'pino'
import type { Bus } from '../bus/mod.ts'
import { NatsBus } from '../bus/mod.ts'
import type { Config } from '../config/mod.ts'
import { ConfigError } from '../config/mod.ts'
import { KvDocuments, MemoryDocuments, type Documents } from './documents.ts'
import { FileDocuments } from './file-documents.ts'
import type { EventLog } from './event-log.ts'
import { JetStreamEventLog } from './jetstream-event-log.ts'
import { KvLeases, KvRegistry } from './kv-registry.ts'
import { MemoryEventLog, MemoryLeases, MemoryRegistry } from './memory.ts'
import type { RunnerLeases, SessionRegistry } from './registry.ts'

export type { EventLog } from './event-log.ts'
export { RegistryConflictError, SessionRecord, RunnerLease, unfinishedTurns } from './registry.ts'
export type { RecordedTurn, RegistryChange, RunnerLeases, SessionRegistry, Versioned } from './registry.ts'
export { MemoryEventLog, MemoryLeases, MemoryRegistry } from './memory.ts'
export { MemoryDocuments } from './documents.ts'
export { FileDocuments }
export { isRunnerAlive } from './liveness.ts'
export type { Documents } from './documents.ts'

export interface State {
  registry: SessionRegistry
  leases: RunnerLeases
  events: EventLog
  /**
   * A document bucket of its own for a surface (e.g. the REST layer's sessions), shared like the registry.
   * `durable`: kept across restarts in the memory backend too, in a file in `session.marker_dir`
   * (what must outlive the process as the sessions' conversations do, such as their tenants).
   */
  documents<T>(name: string, options?: { durable?: boolean }): Promise<Documents<T>>
  close(): Promise<void>
}

/** The file of a durable document bucket in the marker dir: a leading dot, which no marker name has. */
export function durableFileName(name: string): string {
  return `.${name}.jsonl`
}

/** Opens the configured backend: memory on the in-process bus, JetStream on NATS. */
export async function openState(bus: Bus, config: Config, log: Logger): Promise<State> {
  const backend = config.state.backend === 'auto' ? (bus.kind === 'memory' ? 'memory' : 'jetstream') : config.state.backend
  const prefix = config.nats.prefix
  if (backend === 'memory') {
    if (bus.kind !== 'memory') {
      log.warn('state.backend is memory on NATS: nothing is persisted or shared, there is no replay and only one runner works; meant for measurements, not production')
    }
    const events = new MemoryEventLog(bus, prefix, config.state.events_per_session)
    const documents = async <T>(name: string, options?: { durable?: boolean }): Promise<Documents<T>> =>
      options?.durable ? FileDocuments.open<T>(path.join(path.resolve(config.session.marker_dir), durableFileName(name))) : new MemoryDocuments<T>()
    return { registry: new MemoryRegistry(), leases: new MemoryLeases(), events, documents, close: () => events.close() }
  }
  if (!(bus instanceof NatsBus)) throw new ConfigError('config: state.backend: jetstream needs the NATS bus (gateway or runner mode)')
  const nc = bus.connection
  const settings = { storage: config.state.storage, replicas: config.state.replicas, leaseTtlMs: config.state.lease_ttl }
  const [registry, leases, events] = await Promise.all([
    KvRegistry.open(nc, prefix, settings),
    KvLeases.open(nc, prefix, settings),
    JetStreamEventLog.open(
      nc,
      prefix,
      {
        storage: config.state.storage,
        replicas: config.state.replicas,
        maxAgeMs: config.state.event_max_age,
        perSession: config.state.events_per_session,
        maxBytes: config.state.event_max_bytes,
      },
      log,
    ),
  ])
  return {
    registry,
    leases,
    events,
    documents: (name) => KvDocuments.open(nc, prefix, name, settings),
    async close() {
      await events.flush()
      await events.close()
    },
  }
}
