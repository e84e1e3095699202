import { V1MicroTime, type V1Pod } from '@kubernetes/client-node'
import { afterEach, beforeEach, describe, expect, test } from 'vitest'
import { apiStatus, ClientNodeKubeApi, type WatchEvent } from '../../controller/kube/client.ts'
import { kubeConfigFor } from '../../controller/kube/connect.ts'
import { until } from '../controller/harness.ts'
import { FakeKubeApi } from './kube-api.ts'

const pod = (name: string, labels: Record<string, string> = { app: 'x' }): V1Pod => ({
  metadata: { name, labels },
  spec: { containers: [{ name: 'c', image: 'i' }] },
})

let fake: FakeKubeApi
let api: ClientNodeKubeApi
beforeEach(async () => {
  fake = await FakeKubeApi.start()
  api = new ClientNodeKubeApi(kubeConfigFor(fake.url), 'ns')
})
afterEach(() => fake.close())

async function failure(promise: Promise<unknown>): Promise<number | undefined> {
  try {
    await promise
  } catch (err) {
    return apiStatus(err)
  }
  throw new Error('expected a failure')
}

function collect(selector: string, from: string) {
  const events: WatchEvent[] = []
  const done: unknown[] = []
  const started = api.watchPods(
    selector,
    from,
    (e) => events.push(e),
    (err) => done.push(err ?? 'clean'),
  )
  return { events, done, started }
}

describe('fake kube api - through client-node', () => {
  test('create, get, list with a label selector and a resourceVersion; 409 on a second create', async () => {
    const created = await api.createPod(pod('a'))
    expect(created.metadata?.uid).toBeTruthy()
    expect(created.metadata?.creationTimestamp).toBeInstanceOf(Date)
    await api.createPod(pod('b', { app: 'y' }))
    expect(await failure(api.createPod(pod('a')))).toBe(409)
    const list = await api.listPods('app=x')
    expect(list.items.map((p) => p.metadata?.name)).toEqual(['a'])
    expect(Number(list.resourceVersion)).toBeGreaterThan(Number(created.metadata?.resourceVersion))
  })

  test('an invalid pod is refused with 422 (schema-checked)', async () => {
    expect(await failure(api.createPod({ metadata: { name: 'bad' }, spec: {} as never }))).toBe(422)
    expect(await failure(api.createPod({ metadata: { name: 'Bad_Name' }, spec: { containers: [{ name: 'c', image: 'i' }] } }))).toBe(422)
  })

  test('merge patch with a stale resourceVersion is 409; with the current one it applies', async () => {
    const created = await api.createPod(pod('a'))
    const patched = await api.patchPodMetadata('a', created.metadata!.resourceVersion!, { labels: { state: 'assigned' }, annotations: { note: 'n' } })
    expect(patched.metadata?.labels).toEqual({ app: 'x', state: 'assigned' })
    expect(await failure(api.patchPodMetadata('a', created.metadata!.resourceVersion!, { labels: { state: 'warm' } }))).toBe(409)
    const removed = await api.patchPodMetadata('a', patched.metadata!.resourceVersion!, { annotations: { note: null } })
    expect(removed.metadata?.annotations).toEqual({})
    expect(await failure(api.patchPodMetadata('missing', '1', { labels: {} }))).toBe(404)
  })

  test('delete answers true, then false (404) once gone', async () => {
    await api.createPod(pod('a'))
    expect(await api.deletePod('a')).toBe(true)
    expect(await api.deletePod('a')).toBe(false)
  })

  test('leases: get of a missing one is undefined; replace with a stale version is 409', async () => {
    expect(await api.getLease('l')).toBeUndefined()
    const lease = await api.createLease({ metadata: { name: 'l' }, spec: { holderIdentity: 'a', renewTime: new V1MicroTime(1_700_000_000_000) } })
    expect(await failure(api.createLease({ metadata: { name: 'l' }, spec: {} }))).toBe(409)
    const replaced = await api.replaceLease({ ...lease, spec: { holderIdentity: 'b' } })
    expect(replaced.spec?.holderIdentity).toBe('b')
    expect(await failure(api.replaceLease({ ...lease, spec: { holderIdentity: 'c' } }))).toBe(409)
    expect(fake.get('leases', 'ns', 'l')!.spec.holderIdentity).toBe('b')
  })

  test('watch: replays after the version given, then streams; selector applies', async () => {
    const a = await api.createPod(pod('a'))
    await api.createPod(pod('b'))
    const w = collect('app=x', a.metadata!.resourceVersion!)
    await w.started
    await until(() => w.events.length === 1, 'replay of b')
    await api.createPod(pod('other', { app: 'y' }))
    await api.deletePod('a')
    await until(() => w.events.length === 2, 'the delete of a')
    expect(w.events.map((e) => `${e.type} ${e.object.metadata?.name}`)).toEqual(['ADDED b', 'DELETED a'])
    ;(await w.started).abort()
  })

  test('watch: a dropped connection ends the watch', async () => {
    const w = collect('', '')
    await w.started
    await until(() => fake.watchCount === 1, 'watch open')
    fake.dropWatches()
    await until(() => w.done.length === 1, 'done')
  })

  test('watch: 410 Gone after compaction, as a Status event in the stream or as an HTTP status', async () => {
    const a = await api.createPod(pod('a'))
    await api.createPod(pod('b'))
    fake.compact()
    const inStream = collect('', a.metadata!.resourceVersion!)
    await inStream.started
    await until(() => inStream.done.length === 1, 'stream ends')
    expect(inStream.events).toEqual([expect.objectContaining({ type: 'ERROR', object: expect.objectContaining({ code: 410 }) })])
    fake.goneAsHttpStatus = true
    const asStatus = collect('', a.metadata!.resourceVersion!)
    await asStatus.started
    await until(() => asStatus.done.length === 1, 'watch refused')
    expect(apiStatus(asStatus.done[0])).toBe(410)
  })

  test('injected failures hit the matching requests only, as many times as asked', async () => {
    fake.fail({ method: 'POST', resource: 'pods', status: 500, times: 2 })
    expect(await failure(api.createPod(pod('a')))).toBe(500)
    expect(await failure(api.createPod(pod('a')))).toBe(500)
    await api.createPod(pod('a'))
    expect(fake.requests.filter((r) => r.method === 'POST').map((r) => r.status)).toEqual([500, 500, 201])
  })

  test('graceful delete keeps the pod with a deletionTimestamp until removed', async () => {
    fake.gracefulDelete = true
    await api.createPod(pod('a'))
    await api.deletePod('a')
    expect(fake.get('pods', 'ns', 'a')!.metadata.deletionTimestamp).toBeTruthy()
    fake.remove('pods', 'ns', 'a')
    expect(fake.get('pods', 'ns', 'a')).toBeUndefined()
  })
})
