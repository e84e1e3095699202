import { z } from 'zod'
import { DurationField } from '../config/fields.ts'

/** The `state` config section: where session state lives, memory (dev) or NATS JetStream (production). */
export const StateConfigSchema = z.strictObject({
  /** `auto`: memory in dev mode, JetStream in gateway and runner modes. */
  backend: z.enum(['auto', 'memory', 'jetstream']).default('auto'),
  /** JetStream storage of the event stream and buckets. */
  storage: z.enum(['file', 'memory']).default('file'),
  replicas: z.number().int().min(1).max(5).default(1),
  /** How long events are kept for replay. */
  event_max_age: DurationField('24h'),
  /** Events kept per session (older ones are dropped first); on JetStream messages, each of 1–16 events. */
  events_per_session: z.number().int().min(10).default(10_000),
  /** Bytes the event stream may hold in all (-1 = no limit). */
  event_max_bytes: z.number().int().min(-1).default(-1),
  /** A runner that has not renewed its lease for this long is dead; its sessions are claimable. */
  lease_ttl: DurationField('10s'),
})

export type StateConfig = z.output<typeof StateConfigSchema>

/** What openState needs: the `state` section (its backend already chosen by the caller) and two keys of other sections. */
export type StateSettings = Omit<StateConfig, 'backend'> & {
  /** The deployment's subject prefix (`nats.prefix`): names the streams, the buckets and the event subjects. */
  prefix: string
  /** Where the memory backend keeps its durable document buckets (`session.marker_dir`). */
  durable_dir: string
}
