import { jetstreamManager, StorageType } from '@nats-io/jetstream'
import { Kvm, type KV } from '@nats-io/kv'
import type { NatsConnection } from '@nats-io/nats-core'
import { streamName } from './keys.ts'

export interface BucketSettings {
  storage: 'file' | 'memory'
  replicas: number
  /**
   * False: use the bucket as it is, never create or change it (a credential that may only look
   * streams up, e.g. a sandbox pod's session credential). Default true.
   */
  create?: boolean | undefined
}

/** Opens (creating when missing) the key-value bucket `<prefix>_<name>`, one revision per key; `ttlMs` expires keys not rewritten. */
export async function openBucket(nc: NatsConnection, subjectPrefix: string, name: string, settings: BucketSettings, ttlMs?: number): Promise<KV> {
  if (settings.create === false) return bindBucket(nc, subjectPrefix, name)
  return new Kvm(nc).create(streamName(subjectPrefix, name), {
    history: 1,
    storage: settings.storage === 'file' ? StorageType.File : StorageType.Memory,
    replicas: settings.replicas,
    ...(ttlMs !== undefined && { ttl: ttlMs }),
  })
}

/** The existing bucket, looked up (STREAM.INFO) for how it is read (direct gets or not); fails when it does not exist. */
async function bindBucket(nc: NatsConnection, subjectPrefix: string, name: string): Promise<KV> {
  const bucket = streamName(subjectPrefix, name)
  const info = await (await jetstreamManager(nc)).streams.info(`KV_${bucket}`)
  return new Kvm(nc).open(bucket, { allow_direct: info.config.allow_direct })
}
