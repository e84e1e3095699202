/**
 * A fake Kubernetes API server (node:http) for pods, leases and events, good
 * enough for the real `@kubernetes/client-node`: create (409 AlreadyExists),
 * get, list with resourceVersion and label selectors, watch (streamed,
 * headers flushed at once, replay from a resourceVersion, 410 Gone once the
 * history is compacted), merge/JSON patch and replace with resourceVersion
 * preconditions (409 Conflict), delete (404 when missing; optionally graceful).
 * Faults can be injected: failing the next matching requests, dropping every
 * open watch, compacting the history. Pods are schema-checked on the way in
 * (kubernetes-models), so anything the controller sends is validated.
 */
import { randomUUID } from 'node:crypto'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { Pod } from 'kubernetes-models/v1'
import { Lease } from 'kubernetes-models/coordination.k8s.io/v1'

type Obj = Record<string, any>
type Resource = 'pods' | 'leases' | 'events'
type EventType = 'ADDED' | 'MODIFIED' | 'DELETED'

const KINDS: Record<Resource, { kind: string; apiVersion: string; validate?: (o: Obj) => void }> = {
  pods: { kind: 'Pod', apiVersion: 'v1', validate: (o) => new Pod(o as any).validate() },
  leases: { kind: 'Lease', apiVersion: 'coordination.k8s.io/v1', validate: (o) => new Lease(o as any).validate() },
  events: { kind: 'Event', apiVersion: 'v1' },
}

const ROUTE = /^\/(?:api\/v1|apis\/coordination\.k8s\.io\/v1)\/namespaces\/([^/]+)\/(pods|leases|events)(?:\/([^/]+))?$/

/** One injected failure: the next `times` requests matching answer `status`. */
export interface Fault {
  method?: string
  resource?: Resource
  name?: string
  /** Only watch requests (or only non-watch requests when false). */
  watch?: boolean
  status: number
  times: number
}

interface Watcher {
  resource: Resource
  namespace: string
  selector: Selector
  res: http.ServerResponse
}

export interface RequestRecord {
  method: string
  resource: string
  name?: string
  watch: boolean
  status: number
}

export class FakeKubeApi {
  readonly url: string
  readonly requests: RequestRecord[] = []
  /** Delete sets deletionTimestamp and keeps the object until finalize() (as with a grace period). */
  gracefulDelete = false
  /** Watches from a compacted version get an HTTP 410 (instead of a 410 Status event in the stream). */
  goneAsHttpStatus = false
  readonly #server: http.Server
  readonly #now: () => number
  readonly #store = new Map<string, Obj>()
  readonly #history: { rv: number; resource: Resource; namespace: string; type: EventType; object: Obj }[] = []
  readonly #watchers = new Set<Watcher>()
  readonly #faults: Fault[] = []
  readonly #listeners = new Set<(type: EventType, resource: Resource, object: Obj) => void>()
  #rv = 100
  #compactedTo = 0

  private constructor(server: http.Server, url: string, now: () => number) {
    this.#server = server
    this.url = url
    this.#now = now
  }

  /** Starts on a free loopback port; `now` stamps creation and deletion times (the controller's clock). */
  static async start(options: { now?: () => number } = {}): Promise<FakeKubeApi> {
    let api: FakeKubeApi | undefined
    const server = http.createServer((req, res) => api!.handle(req, res))
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    const { port } = server.address() as AddressInfo
    api = new FakeKubeApi(server, `http://127.0.0.1:${port}`, options.now ?? Date.now)
    return api
  }

  async close(): Promise<void> {
    for (const w of this.#watchers) w.res.destroy()
    this.#watchers.clear()
    this.#server.closeAllConnections()
    await new Promise<void>((resolve) => this.#server.close(() => resolve()))
  }

  // ---- test controls ----

  /** The next `times` requests that match answer `status` with a Status body. */
  fail(fault: Omit<Fault, 'times'> & { times?: number }): void {
    this.#faults.push({ times: 1, ...fault })
  }

  /** Cuts every open watch connection (as a load balancer or apiserver restart would). */
  dropWatches(): void {
    for (const w of this.#watchers) w.res.destroy()
    this.#watchers.clear()
  }

  /** Forgets the history up to now: watches from an older resourceVersion get 410 Gone. Open watches are ended with it. */
  compact(): void {
    this.#compactedTo = this.#rv
    this.#history.length = 0
    for (const w of this.#watchers) this.#sendGone(w.res)
    this.#watchers.clear()
  }

  get watchCount(): number {
    return this.#watchers.size
  }

  /** Calls `fn` on every stored change (a fake kubelet follows pods this way). */
  onChange(fn: (type: EventType, resource: Resource, object: Obj) => void): () => void {
    this.#listeners.add(fn)
    return () => this.#listeners.delete(fn)
  }

  list(resource: Resource, namespace?: string): Obj[] {
    return [...this.#store.entries()]
      .filter(([key]) => key.startsWith(namespace === undefined ? `${resource}/` : `${resource}/${namespace}/`))
      .map(([, o]) => structuredClone(o))
  }

  get(resource: Resource, namespace: string, name: string): Obj | undefined {
    const o = this.#store.get(`${resource}/${namespace}/${name}`)
    return o && structuredClone(o)
  }

  /** Puts an object in directly (pods left by an earlier controller, for instance). */
  seed(resource: Resource, namespace: string, object: Obj): Obj {
    return this.#create(resource, namespace, structuredClone(object))
  }

  /** Changes a stored object as a kubelet or another client would; bumps its version and tells watchers. */
  mutate(resource: Resource, namespace: string, name: string, change: (o: Obj) => void): Obj | undefined {
    const key = `${resource}/${namespace}/${name}`
    const current = this.#store.get(key)
    if (current === undefined) return undefined
    const next = structuredClone(current)
    change(next)
    return this.#put(resource, namespace, next, 'MODIFIED')
  }

  /** Removes an object outright (kubelet finishing a graceful delete, node loss). */
  remove(resource: Resource, namespace: string, name: string): boolean {
    const key = `${resource}/${namespace}/${name}`
    const current = this.#store.get(key)
    if (current === undefined) return false
    this.#store.delete(key)
    const gone = structuredClone(current)
    gone.metadata.resourceVersion = String(++this.#rv)
    this.#emit(resource, namespace, 'DELETED', gone)
    return true
  }

  // ---- HTTP ----

  private handle(req: http.IncomingMessage, res: http.ServerResponse): void {
    const url = new URL(req.url ?? '/', 'http://fake')
    const route = ROUTE.exec(url.pathname)
    const watch = url.searchParams.get('watch') === 'true'
    const record: RequestRecord = { method: req.method ?? 'GET', resource: route?.[2] ?? url.pathname, watch, status: 0 }
    if (route?.[3] !== undefined) record.name = decodeURIComponent(route[3])
    this.requests.push(record)
    const send = (status: number, body: Obj) => {
      record.status = status
      res.writeHead(status, { 'content-type': 'application/json' })
      res.end(JSON.stringify(body))
    }
    if (route === null) return send(404, status(404, 'NotFound', `no route ${url.pathname}`))
    const namespace = decodeURIComponent(route[1]!)
    const resource = route[2] as Resource
    const name = route[3] === undefined ? undefined : decodeURIComponent(route[3])
    const fault = this.#faults.find(
      (f) =>
        (f.method === undefined || f.method === req.method) &&
        (f.resource === undefined || f.resource === resource) &&
        (f.name === undefined || f.name === name) &&
        (f.watch === undefined || f.watch === watch),
    )
    if (fault !== undefined) {
      if (--fault.times <= 0) this.#faults.splice(this.#faults.indexOf(fault), 1)
      return send(fault.status, status(fault.status, reasonOf(fault.status), 'injected failure'))
    }
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      try {
        const text = Buffer.concat(chunks).toString('utf8')
        const body = text === '' ? undefined : JSON.parse(text)
        this.#route(req.method ?? 'GET', resource, namespace, name, url, body, req.headers['content-type'] ?? '', res, send, record)
      } catch (err) {
        if (err instanceof ApiError) return send(err.code, status(err.code, err.reason, err.message))
        return send(500, status(500, 'InternalError', String(err)))
      }
    })
  }

  #route(
    method: string,
    resource: Resource,
    namespace: string,
    name: string | undefined,
    url: URL,
    body: Obj | undefined,
    contentType: string,
    res: http.ServerResponse,
    send: (status: number, body: Obj) => void,
    record: RequestRecord,
  ): void {
    const key = name === undefined ? undefined : `${resource}/${namespace}/${name}`
    if (name === undefined) {
      if (method === 'GET' && url.searchParams.get('watch') === 'true') {
        record.status = 200
        return this.#watch(resource, namespace, parseSelector(url.searchParams.get('labelSelector') ?? ''), url.searchParams.get('resourceVersion') ?? '', res)
      }
      if (method === 'GET') {
        const selector = parseSelector(url.searchParams.get('labelSelector') ?? '')
        const items = this.list(resource, namespace).filter((o) => matches(selector, o.metadata?.labels ?? {}))
        return send(200, {
          kind: `${KINDS[resource].kind}List`,
          apiVersion: KINDS[resource].apiVersion,
          metadata: { resourceVersion: String(this.#rv) },
          items,
        })
      }
      if (method === 'POST') {
        if (body === undefined) throw new ApiError(400, 'BadRequest', 'no body')
        return send(201, this.#create(resource, namespace, body))
      }
      throw new ApiError(405, 'MethodNotAllowed', method)
    }
    const current = this.#store.get(key!)
    if (current === undefined) throw new ApiError(404, 'NotFound', `${resource} "${name}" not found`)
    switch (method) {
      case 'GET':
        return send(200, structuredClone(current))
      case 'PUT': {
        if (body === undefined) throw new ApiError(400, 'BadRequest', 'no body')
        const given = body.metadata?.resourceVersion
        if (given !== undefined && given !== current.metadata.resourceVersion)
          throw new ApiError(409, 'Conflict', `the object has been modified; please apply your changes to the latest version and try again`)
        const next = { ...body, metadata: { ...body.metadata, uid: current.metadata.uid, creationTimestamp: current.metadata.creationTimestamp } }
        this.#validate(resource, next)
        return send(200, this.#put(resource, namespace, next, 'MODIFIED'))
      }
      case 'PATCH': {
        if (body === undefined) throw new ApiError(400, 'BadRequest', 'no body')
        const next = contentType.includes('json-patch') ? jsonPatch(current, body as Obj[]) : mergePatch(current, body)
        const given = contentType.includes('json-patch') ? undefined : body.metadata?.resourceVersion
        if (given !== undefined && given !== current.metadata.resourceVersion)
          throw new ApiError(409, 'Conflict', 'the object has been modified; please apply your changes to the latest version and try again')
        next.metadata.resourceVersion = current.metadata.resourceVersion
        this.#validate(resource, next)
        return send(200, this.#put(resource, namespace, next, 'MODIFIED'))
      }
      case 'DELETE': {
        if (this.gracefulDelete && resource === 'pods') {
          if (current.metadata.deletionTimestamp === undefined) {
            const next = structuredClone(current)
            next.metadata.deletionTimestamp = new Date(this.#now()).toISOString()
            return send(200, this.#put(resource, namespace, next, 'MODIFIED'))
          }
          return send(200, structuredClone(current))
        }
        this.remove(resource, namespace, name!)
        return send(200, structuredClone(current))
      }
    }
    throw new ApiError(405, 'MethodNotAllowed', method)
  }

  #watch(resource: Resource, namespace: string, selector: Selector, from: string, res: http.ServerResponse): void {
    const since = Number(from || '0')
    if (from !== '' && from !== '0' && since < this.#compactedTo) {
      if (this.goneAsHttpStatus) {
        res.writeHead(410, { 'content-type': 'application/json' })
        res.end(JSON.stringify(status(410, 'Expired', `too old resource version: ${since} (${this.#compactedTo})`)))
        return
      }
      res.writeHead(200, { 'content-type': 'application/json' })
      return this.#sendGone(res)
    }
    res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'no-cache' })
    // The client waits for the headers before it reads anything: send them now.
    res.flushHeaders()
    const watcher: Watcher = { resource, namespace, selector, res }
    const write = (type: EventType, object: Obj) => res.write(JSON.stringify({ type, object }) + '\n')
    if (from === '' || from === '0') {
      for (const o of this.list(resource, namespace)) if (matches(selector, o.metadata?.labels ?? {})) write('ADDED', o)
    } else {
      for (const h of this.#history)
        if (h.rv > since && h.resource === resource && h.namespace === namespace && matches(selector, h.object.metadata?.labels ?? {})) write(h.type, h.object)
    }
    this.#watchers.add(watcher)
    res.on('close', () => this.#watchers.delete(watcher))
  }

  #sendGone(res: http.ServerResponse): void {
    res.end(JSON.stringify({ type: 'ERROR', object: status(410, 'Expired', 'too old resource version') }) + '\n')
  }

  #create(resource: Resource, namespace: string, body: Obj): Obj {
    const object = structuredClone(body)
    object.metadata ??= {}
    if (object.metadata.name === undefined && object.metadata.generateName !== undefined)
      object.metadata.name = object.metadata.generateName + randomUUID().slice(0, 5)
    const name = object.metadata.name
    if (typeof name !== 'string' || !/^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$/.test(name))
      throw new ApiError(422, 'Invalid', `metadata.name: Invalid value: ${JSON.stringify(name)}`)
    if (this.#store.has(`${resource}/${namespace}/${name}`)) throw new ApiError(409, 'AlreadyExists', `${resource} "${name}" already exists`)
    object.apiVersion ??= KINDS[resource].apiVersion
    object.kind ??= KINDS[resource].kind
    object.metadata.namespace = namespace
    object.metadata.uid = randomUUID()
    object.metadata.creationTimestamp = new Date(this.#now()).toISOString()
    delete object.metadata.resourceVersion
    if (resource === 'pods') object.status ??= { phase: 'Pending', conditions: [{ type: 'PodScheduled', status: 'True' }] }
    this.#validate(resource, object)
    return this.#put(resource, namespace, object, 'ADDED')
  }

  #validate(resource: Resource, object: Obj): void {
    try {
      KINDS[resource].validate?.(object)
    } catch (err) {
      throw new ApiError(422, 'Invalid', `${KINDS[resource].kind} is invalid: ${(err as Error).message}`)
    }
  }

  #put(resource: Resource, namespace: string, object: Obj, type: EventType): Obj {
    object.metadata.resourceVersion = String(++this.#rv)
    this.#store.set(`${resource}/${namespace}/${object.metadata.name}`, object)
    this.#emit(resource, namespace, type, object)
    return structuredClone(object)
  }

  #emit(resource: Resource, namespace: string, type: EventType, object: Obj): void {
    this.#history.push({ rv: Number(object.metadata.resourceVersion), resource, namespace, type, object: structuredClone(object) })
    for (const w of this.#watchers) {
      if (w.resource !== resource || w.namespace !== namespace || !matches(w.selector, object.metadata?.labels ?? {})) continue
      w.res.write(JSON.stringify({ type, object }) + '\n')
    }
    for (const listener of this.#listeners) listener(type, resource, structuredClone(object))
  }
}

class ApiError extends Error {
  readonly code: number
  readonly reason: string
  constructor(code: number, reason: string, message: string) {
    super(message)
    this.code = code
    this.reason = reason
  }
}

function status(code: number, reason: string, message: string): Obj {
  return { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason, code }
}

function reasonOf(code: number): string {
  return (
    (
      { 404: 'NotFound', 409: 'Conflict', 410: 'Expired', 422: 'Invalid', 429: 'TooManyRequests', 500: 'InternalError', 503: 'ServiceUnavailable' } as Record<
        number,
        string
      >
    )[code] ?? 'Unknown'
  )
}

type Selector = { key: string; op: '=' | '!=' | 'exists' | '!exists'; value?: string }[]

function parseSelector(text: string): Selector {
  if (text === '') return []
  return text.split(',').map((part) => {
    const ne = part.split('!=')
    if (ne.length === 2) return { key: ne[0]!.trim(), op: '!=' as const, value: ne[1]!.trim() }
    const eq = part.split(/==?/)
    if (eq.length === 2) return { key: eq[0]!.trim(), op: '=' as const, value: eq[1]!.trim() }
    if (part.startsWith('!')) return { key: part.slice(1).trim(), op: '!exists' as const }
    return { key: part.trim(), op: 'exists' as const }
  })
}

function matches(selector: Selector, labels: Record<string, string>): boolean {
  return selector.every(({ key, op, value }) => {
    const has = Object.hasOwn(labels, key)
    if (op === 'exists') return has
    if (op === '!exists') return !has
    if (op === '=') return labels[key] === value
    return labels[key] !== value
  })
}

/** RFC 7386 JSON merge patch. */
function mergePatch(target: Obj, patch: Obj): Obj {
  const out: Obj = structuredClone(target)
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete out[key]
    else if (typeof value === 'object' && !Array.isArray(value) && typeof out[key] === 'object' && out[key] !== null && !Array.isArray(out[key]))
      out[key] = mergePatch(out[key], value)
    else if (typeof value === 'object' && !Array.isArray(value)) out[key] = mergePatch({}, value)
    else out[key] = structuredClone(value)
  }
  return out
}

/** RFC 6902 JSON patch: add, replace, remove, test. */
function jsonPatch(target: Obj, ops: Obj[]): Obj {
  const out = structuredClone(target)
  for (const op of ops) {
    const parts = String(op.path)
      .split('/')
      .slice(1)
      .map((p) => p.replaceAll('~1', '/').replaceAll('~0', '~'))
    const last = parts.pop()!
    let node: Obj = out
    for (const p of parts) {
      if (node[p] === undefined) {
        if (op.op !== 'add') throw new ApiError(422, 'Invalid', `path ${op.path} not found`)
        node[p] = {}
      }
      node = node[p]
    }
    if (op.op === 'test') {
      if (JSON.stringify(node[last]) !== JSON.stringify(op.value)) throw new ApiError(409, 'Conflict', `test failed at ${op.path}`)
    } else if (op.op === 'remove') {
      delete node[last]
    } else if (op.op === 'add' || op.op === 'replace') {
      node[last] = structuredClone(op.value)
    } else {
      throw new ApiError(422, 'Invalid', `unsupported op ${op.op}`)
    }
  }
  return out
}
