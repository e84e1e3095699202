/**
 * The container of each sandbox pod, played on this machine. kwok marks the
 * controller's pods Running without starting anything; this fixture starts,
 * for each Running pod of a pool, the process its container would run: the
 * pod's own args and env (downward-API fields and Secret keys resolved as a
 * kubelet does, RUNNER_ID = the pod's name), its ConfigMap volume as the
 * config file, its Secret volumes as files (waiting for the Secret, as a
 * kubelet does), its other volume mounts as folders of its own here. What differs
 * from a real node is said in `local`: the NATS URL (loopback), the agent CLI
 * (the fake one) and ports (0: many pods share one host). A pod deleted is
 * sent SIGTERM (a kubelet's graceful stop); a pod that finished (an eviction)
 * loses its process at once (SIGKILL), as a node does, though only once the
 * pod reads Failed: a test waits for `exited` before it counts on it being gone.
 */
import { mkdir, readFile, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { Watch, type V1Container, type V1EnvVar, type V1Pod, type V1Secret } from '@kubernetes/client-node'
import { parse } from 'yaml'
import { poolSelector } from '../../controller/labels.ts'
import { RUNNER_CONTAINER } from '../../controller/pod-spec.ts'
import { startServiceProcess, type ServiceProcess } from '../fixtures/service-process.ts'
import type { Clients } from './kube-local.ts'

/** How long a pod's process waits for a Secret its volumes name (a kubelet retries for ever). */
const SECRET_WAIT_MS = 60_000

export interface PodRunnersOptions {
  api: Clients
  namespace: string
  pool: string
  /** Where the pods' volumes live on this machine (a folder per pod). */
  dir: string
  /** What this machine changes in the pod's config (parsed from its ConfigMap) and env. */
  local: { config(config: Record<string, any>): void; env: Record<string, string> }
}

export interface PodProcess {
  pod: string
  process: ServiceProcess
  /** Set when the fixture stopped it because the pod went away or finished. */
  stoppedBecause?: 'deleted' | 'finished'
  /**
   * Set once that stopped process has exited: its NATS connection is closed, so a request to its
   * runner finds no responders. (Until then one may reach it and never be answered: a kubelet
   * reports a pod Failed only after its container is gone, this fixture kills it after.)
   */
  exited?: true
}

/** Runs a process per Running pod of a pool until stopped. */
export class PodRunners {
  readonly #o: PodRunnersOptions
  readonly #processes = new Map<string, PodProcess>()
  readonly #starting = new Map<string, Promise<void>>()
  /** Pods that ended while their process was starting: stopped once it started. */
  readonly #ended = new Map<string, 'deleted' | 'finished'>()
  #watch: AbortController | undefined
  #stopped = true
  /** Of the last change seen: where a watch that ended resumes. */
  #resourceVersion: string | undefined
  readonly errors: Error[] = []

  constructor(options: PodRunnersOptions) {
    this.#o = options
  }

  /** Watches the pool's pods (every change in order, so a pod that fails and is deleted at once is seen failing). */
  async start(): Promise<void> {
    this.#stopped = false
    await this.#watchFrom(undefined)
  }

  /**
   * A watch from `resourceVersion` (none: the pods as they are now, then their changes). The
   * client ends a watch that was quiet for 30 s, and the API server ends watches after a while:
   * each is resumed where it ended, so no change is missed.
   */
  async #watchFrom(resourceVersion: string | undefined): Promise<void> {
    const { api, namespace, pool } = this.#o
    const resume = (from: string | undefined) => {
      if (this.#stopped) return
      this.#watchFrom(from).catch((err: unknown) => void this.errors.push(new Error('resuming the pod watch failed', { cause: err })))
    }
    const watch = await new Watch(api.config).watch(
      `/api/v1/namespaces/${namespace}/pods`,
      { labelSelector: poolSelector(pool), allowWatchBookmarks: true, ...(resourceVersion !== undefined && { resourceVersion }) },
      (type: string, object: V1Pod) => {
        if (type === 'ERROR') {
          // Most often 410 Gone: the version is too old to resume from. Nothing here can tell what was missed.
          this.errors.push(new Error(`the pod watch failed: ${JSON.stringify(object)}`))
          this.#resourceVersion = undefined
          return
        }
        this.#resourceVersion = object.metadata?.resourceVersion ?? this.#resourceVersion
        if (type !== 'BOOKMARK') this.#seen(type, object)
      },
      (err: unknown) => {
        if (this.#stopped) return
        if (err && (err as Error).name !== 'TimeoutError') this.errors.push(new Error('the pod watch ended', { cause: err }))
        resume(this.#resourceVersion)
      },
    )
    // Stopped while it was starting: this watch is not wanted.
    if (this.#stopped) watch.abort()
    else this.#watch = watch
  }

  /** The process of a pod, once started. */
  get(pod: string): PodProcess | undefined {
    return this.#processes.get(pod)
  }

  /** Pods whose process runs now. */
  running(): string[] {
    return [...this.#processes.values()].filter((p) => p.stoppedBecause === undefined).map((p) => p.pod)
  }

  output(): string {
    return [...this.#processes.values()].map((p) => `--- pod ${p.pod}${p.stoppedBecause ? ` (${p.stoppedBecause})` : ''}\n${p.process.output()}`).join('\n')
  }

  async stop(): Promise<void> {
    this.#stopped = true
    this.#watch?.abort()
    await Promise.allSettled(this.#starting.values())
    await Promise.all([...this.#processes.values()].map((p) => p.process.stop('SIGKILL')))
  }

  #seen(type: string, pod: V1Pod): void {
    const name = pod.metadata!.name!
    if (type === 'DELETED') this.#end(name, 'deleted')
    else if (pod.status?.phase === 'Failed' || pod.status?.phase === 'Succeeded') this.#end(name, 'finished')
    else if (pod.metadata?.deletionTimestamp !== undefined) this.#end(name, 'deleted')
    else if (pod.status?.phase === 'Running' && !this.#processes.has(name) && !this.#starting.has(name)) {
      const starting = this.#run(pod)
        .catch((err: unknown) => void this.errors.push(new Error(`pod ${name}: ${(err as Error).message}`, { cause: err })))
        .finally(() => this.#starting.delete(name))
      this.#starting.set(name, starting)
    }
  }

  #end(name: string, why: 'deleted' | 'finished'): void {
    const known = this.#processes.get(name)
    if (known === undefined) {
      if (this.#starting.has(name) && !this.#ended.has(name)) this.#ended.set(name, why)
      return
    }
    if (known.stoppedBecause !== undefined) return
    known.stoppedBecause = why
    void known.process.stop(why === 'finished' ? 'SIGKILL' : 'SIGTERM').then(() => (known.exited = true))
  }

  /** Starts the runner container of `pod` as a process here. */
  async #run(pod: V1Pod): Promise<void> {
    const name = pod.metadata!.name!
    const container = pod.spec?.containers.find((c) => c.name === RUNNER_CONTAINER)
    if (container === undefined) throw new Error(`no container ${RUNNER_CONTAINER}`)
    const mounts = await this.#mounts(pod, container)
    const local = (value: string) => {
      for (const [mountPath, dir] of mounts) if (value === mountPath || value.startsWith(`${mountPath}/`)) return dir + value.slice(mountPath.length)
      return value
    }
    // The container's args: `<mode> --config <file on the ConfigMap volume>`, all this fixture knows how to run.
    const [mode, flag, configFile, ...rest] = container.args ?? []
    if (mode === undefined || flag !== '--config' || configFile === undefined || rest.length > 0)
      throw new Error(`unexpected container args ${JSON.stringify(container.args)}`)
    const config = localPaths(parse(await readFile(local(configFile), 'utf8')), local) as Record<string, any>
    this.#o.local.config(config)
    const env: Record<string, string> = {}
    for (const entry of container.env ?? []) env[entry.name] = local(await this.#envValue(pod, entry))
    Object.assign(env, this.#o.local.env)
    const started = await startServiceProcess(mode, config, this.#o.dir, env, { cwd: local(container.workingDir ?? '/') })
    this.#processes.set(name, { pod: name, process: started })
    const ended = this.#ended.get(name)
    if (ended !== undefined) this.#end(name, ended)
  }

  /**
   * Each volume mount as a folder of the pod's here; a ConfigMap volume filled with its keys, a
   * Secret volume with its keys (or its `items`) as files of the volume's mode.
   */
  async #mounts(pod: V1Pod, container: V1Container): Promise<[string, string][]> {
    const { api, namespace, dir } = this.#o
    const name = pod.metadata!.name!
    const mounts: [string, string][] = []
    for (const mount of container.volumeMounts ?? []) {
      const local = path.join(dir, name, mount.name)
      await mkdir(local, { recursive: true })
      const volume = pod.spec?.volumes?.find((v) => v.name === mount.name)
      if (volume?.configMap?.name !== undefined) {
        const configMap = await api.core.readNamespacedConfigMap({ name: volume.configMap.name, namespace })
        for (const [key, value] of Object.entries(configMap.data ?? {})) await writeFile(path.join(local, key), value)
      }
      if (volume?.secret?.secretName !== undefined) {
        const { secretName, items, defaultMode } = volume.secret
        const data = (await this.#secret(name, secretName)).data ?? {}
        for (const { key, path: file, mode } of items ?? Object.keys(data).map((key) => ({ key, path: key, mode: undefined }))) {
          const value = data[key]
          if (value === undefined) throw new Error(`Secret ${secretName} has no key ${key}`)
          await writeFile(path.join(local, file), Buffer.from(value, 'base64'), { mode: mode ?? defaultMode ?? 0o644 })
        }
      }
      mounts.push([mount.mountPath, local])
    }
    // Longest first: a mount inside another wins.
    return mounts.sort((a, b) => b[0].length - a[0].length)
  }

  /**
   * A Secret a pod's volume names. As a kubelet does, the container does not start before it exists
   * (the controller creates a pod's own Secret right after the pod); waiting ends when the pod does.
   */
  async #secret(pod: string, name: string): Promise<V1Secret> {
    const deadline = Date.now() + SECRET_WAIT_MS
    for (;;) {
      try {
        return await this.#o.api.core.readNamespacedSecret({ name, namespace: this.#o.namespace })
      } catch (err) {
        if ((err as { code?: number }).code !== 404) throw err
        if (this.#ended.has(pod) || this.#stopped) throw new Error(`the pod ended while its Secret ${name} did not exist`)
        if (Date.now() > deadline) throw new Error(`Secret ${name} did not appear in ${SECRET_WAIT_MS / 1000} s`)
        await new Promise((resolve) => setTimeout(resolve, 100))
      }
    }
  }

  /** An env entry's value as the kubelet resolves it. */
  async #envValue(pod: V1Pod, entry: V1EnvVar): Promise<string> {
    if (entry.value !== undefined) return entry.value
    const field = entry.valueFrom?.fieldRef?.fieldPath
    if (field === 'metadata.name') return pod.metadata!.name!
    if (field === 'metadata.namespace') return pod.metadata!.namespace!
    const secretKey = entry.valueFrom?.secretKeyRef
    if (secretKey !== undefined) {
      const secret = await this.#o.api.core.readNamespacedSecret({ name: secretKey.name!, namespace: this.#o.namespace })
      const data = secret.data?.[secretKey.key]
      if (data === undefined) throw new Error(`Secret ${secretKey.name} has no key ${secretKey.key}`)
      return Buffer.from(data, 'base64').toString('utf8')
    }
    throw new Error(`env ${entry.name}: unsupported source ${JSON.stringify(entry.valueFrom)}`)
  }
}

/** Every string in a parsed config with the pod's mount paths made local. */
function localPaths(value: unknown, local: (value: string) => string): unknown {
  if (typeof value === 'string') return local(value)
  if (Array.isArray(value)) return value.map((item) => localPaths(item, local))
  if (value !== null && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, localPaths(item, local)]))
  return value
}
