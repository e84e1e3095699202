/** Session state: the registry, runner leases and the event log, in memory (dev) or JetStream. */
import path from 'node:path'
import type { NatsConnection } from '@nats-io/nats-core'
import type { Logger } from 'pino'
import type { Bus } from '../bus/mod.ts'
import type { StateSettings } from './config.ts'
import { KvDocuments, MemoryDocuments, type Documents } from './documents.ts'
import { FileDocuments } from './file-documents.ts'
import type { EventLog } from './event-log.ts'
import { JetStreamEventLog } from './jetstream-event-log.ts'
import { KvLeases, KvRegistry } from './kv-registry.ts'
import { MemoryEventLog, MemoryLeases, MemoryRegistry } from './memory.ts'
import type { RunnerLeases, SessionRegistry } from './registry.ts'

export type { EventLog, StoredEvent } from './event-log.ts'
export { StateConfigSchema } from './config.ts'
export type { StateConfig, StateSettings } from './config.ts'
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

/**
 * Where state lives: JetStream on a NATS connection, or this process's memory, whose
 * event log still publishes each event on the bus.
 */
export type StateStore = { connection: NatsConnection } | { memory: Bus }

export interface OpenStateOptions {
  /**
   * False: use the streams and buckets as they are, create or change none (a sandbox pod's session
   * credential may only look them up; the gateways and the controller create them). Default true.
   */
  create?: boolean
}

/** Opens the session state in `store`. */
export async function openState(store: StateStore, settings: StateSettings, log: Logger, options: OpenStateOptions = {}): Promise<State> {
  const { prefix } = settings
  if ('memory' in store) {
    if (store.memory.kind !== 'memory') {
      log.warn(
        'state.backend is memory on NATS: nothing is persisted or shared, there is no replay and only one runner works; meant for measurements, not production',
      )
    }
    const events = new MemoryEventLog(store.memory, prefix, settings.events_per_session)
    const documents = async <T>(name: string, options?: { durable?: boolean }): Promise<Documents<T>> =>
      options?.durable ? FileDocuments.open<T>(path.join(path.resolve(settings.durable_dir), durableFileName(name))) : new MemoryDocuments<T>()
    return { registry: new MemoryRegistry(), leases: new MemoryLeases(), events, documents, close: () => events.close() }
  }
  const nc = store.connection
  const buckets = { storage: settings.storage, replicas: settings.replicas, leaseTtlMs: settings.lease_ttl, create: options.create }
  const [registry, leases, events] = await Promise.all([
    KvRegistry.open(nc, prefix, buckets),
    KvLeases.open(nc, prefix, buckets),
    JetStreamEventLog.open(
      nc,
      prefix,
      {
        storage: settings.storage,
        replicas: settings.replicas,
        maxAgeMs: settings.event_max_age,
        perSession: settings.events_per_session,
        maxBytes: settings.event_max_bytes,
        create: options.create,
      },
      log,
    ),
  ])
  return {
    registry,
    leases,
    events,
    documents: (name) => KvDocuments.open(nc, prefix, name, buckets),
    async close() {
      await events.flush()
      await events.close()
    },
  }
}
