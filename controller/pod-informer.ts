import type { V1Pod } from '@kubernetes/client-node'
import type { Logger } from 'pino'
import type { Clock } from './clock.ts'
import { apiStatus, type KubeApi, type WatchEvent } from './kube/client.ts'

/** Longest wait between two failed list/watch attempts. */
const MAX_BACKOFF_MS = 30_000

/**
 * A cache of one label selector's pods: list, then watch from the list's
 * resourceVersion. A dropped watch resumes from the last version seen; a
 * watch answered with 410 Gone (the version is too old) lists again. Every
 * change calls `onChange` with the pod's name (the controller's reconcile
 * trigger; a pod added and deleted between two passes is still seen once).
 */
export class PodInformer {
  readonly #api: KubeApi
  readonly #selector: string
  readonly #clock: Clock
  readonly #log: Logger
  readonly #onChange: (pod?: string) => void
  readonly #pods = new Map<string, V1Pod>()
  #version = ''
  #synced = false
  #stopped = true
  #failures = 0
  #watch: { abort(): void } | undefined
  #cancelRetry: (() => void) | undefined
  /** Counts relists and re-watches, for tests and metrics. */
  readonly stats = { lists: 0, watches: 0, gone: 0, dropped: 0 }

  constructor(options: { api: KubeApi; selector: string; clock: Clock; log: Logger; onChange: (pod?: string) => void }) {
    this.#api = options.api
    this.#selector = options.selector
    this.#clock = options.clock
    this.#log = options.log
    this.#onChange = options.onChange
  }

  /** True once a list succeeded: only then does the cache say which pods exist. */
  get synced(): boolean {
    return this.#synced
  }

  pods(): V1Pod[] {
    return [...this.#pods.values()]
  }

  get(name: string): V1Pod | undefined {
    return this.#pods.get(name)
  }

  /** Lists, then keeps watching; resolves after the first list (or its failure, which is retried). */
  async start(): Promise<void> {
    this.#stopped = false
    await this.#list()
  }

  stop(): void {
    this.#stopped = true
    this.#cancelRetry?.()
    this.#watch?.abort()
    this.#watch = undefined
  }

  /** Drops the cache and lists again (a new leader starts from the truth). */
  async relist(): Promise<void> {
    this.#watch?.abort()
    this.#watch = undefined
    await this.#list()
  }

  async #list(): Promise<void> {
    if (this.#stopped) return
    this.stats.lists++
    try {
      const { items, resourceVersion } = await this.#api.listPods(this.#selector)
      this.#pods.clear()
      for (const pod of items) this.#pods.set(pod.metadata!.name!, pod)
      this.#version = resourceVersion
      this.#synced = true
      this.#failures = 0
    } catch (err) {
      this.#log.warn({ err, status: apiStatus(err) }, 'listing pods failed')
      this.#retry(() => this.#list())
      return
    }
    this.#onChange()
    await this.#startWatch()
  }

  async #startWatch(): Promise<void> {
    if (this.#stopped) return
    this.stats.watches++
    let gone = false
    let ended = false
    const onEvent = (event: WatchEvent) => {
      if (ended) return
      if (event.type === 'ERROR') {
        // The server ends a watch whose version it no longer has with a Status (410 Gone) in the stream.
        gone = event.object.code === 410
        if (!gone) this.#log.warn({ status: event.object.code, reason: event.object.reason }, 'pod watch error event')
        return
      }
      const version = event.object.metadata?.resourceVersion
      if (version !== undefined) this.#version = version
      if (event.type === 'BOOKMARK') return
      this.#failures = 0
      const name = event.object.metadata!.name!
      if (event.type === 'DELETED') this.#pods.delete(name)
      else this.#pods.set(name, event.object)
      this.#onChange(name)
    }
    const onDone = (err: unknown) => {
      if (ended) return
      ended = true
      this.#watch = undefined
      if (this.#stopped) return
      if (gone || apiStatus(err) === 410) {
        this.stats.gone++
        this.#log.info('pod watch expired (410 Gone); listing again')
        this.#retry(() => this.#list(), true)
        return
      }
      this.stats.dropped++
      if (err) this.#log.info({ err: String(err) }, 'pod watch ended; resuming')
      // A clean end (the server's watch timeout) resumes at once, unless it keeps happening with no events between.
      this.#retry(() => this.#startWatch(), (err === null || err === undefined) && this.#failures === 0)
    }
    try {
      const watch = await this.#api.watchPods(this.#selector, this.#version, onEvent, onDone)
      if (ended || this.#stopped) watch.abort()
      else this.#watch = watch
    } catch (err) {
      onDone(err)
    }
  }

  /** Runs `fn` again: at once, or after a back-off that doubles with each failure since the last success. */
  #retry(fn: () => Promise<void>, immediate = false): void {
    if (this.#stopped) return
    const delay = immediate ? 0 : Math.min(MAX_BACKOFF_MS, 100 * 2 ** this.#failures)
    this.#failures++
    this.#cancelRetry = this.#clock.after(delay, () => void fn())
  }
}
