import { StorageType } from '@nats-io/jetstream'
import { Kvm, type KV } from '@nats-io/kv'
import type { NatsConnection } from '@nats-io/nats-core'
import { streamName } from './keys.ts'

export interface BucketSettings {
  storage: 'file' | 'memory'
  replicas: number
}

/** Opens (creating when missing) the key-value bucket `<prefix>_<name>`, one revision per key; `ttlMs` expires keys not rewritten. */
export function openBucket(nc: NatsConnection, subjectPrefix: string, name: string, settings: BucketSettings, ttlMs?: number): Promise<KV> {
  return new Kvm(nc).create(streamName(subjectPrefix, name), {
    history: 1,
    storage: settings.storage === 'file' ? StorageType.File : StorageType.Memory,
    replicas: settings.replicas,
    ...(ttlMs !== undefined && { ttl: ttlMs }),
  })
}
