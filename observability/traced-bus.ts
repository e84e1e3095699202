import type { Bus, BusMessage, Headers, RequestOptions, SubscribeOptions, Subscription } from '../bus/mod.ts'
import type { Tracing } from './spans.ts'

/**
 * The gateway's bus with tracing: every request (a command to a runner) runs
 * in a `runner.command` client span whose trace context travels in the
 * message headers, so the runner's `session.execute` span joins the same
 * trace, across processes. Only used when tracing is on; everything else is
 * passed through.
 */
export class TracedBus implements Bus {
  readonly #bus: Bus
  readonly #tracing: Tracing
  readonly #namespace: string

  constructor(bus: Bus, tracing: Tracing, namespace: string) {
    this.#bus = bus
    this.#tracing = tracing
    this.#namespace = namespace
  }

  get kind(): Bus['kind'] {
    return this.#bus.kind
  }

  publish(subject: string, data: string, headers?: Headers, value?: unknown): void {
    this.#bus.publish(subject, data, headers, value)
  }

  subscribe(subject: string, handler: (msg: BusMessage) => void, options?: SubscribeOptions): Subscription {
    return this.#bus.subscribe(subject, handler, options)
  }

  async request(subject: string, data: string, options: RequestOptions): Promise<BusMessage> {
    const span = this.#tracing.startSpan('runner.command', {
      kind: 'client',
      attributes: { namespace: this.#namespace, 'messaging.destination.name': subject, ...commandAttributes(data) },
    })
    try {
      const reply = await this.#bus.request(subject, data, { ...options, headers: { ...options.headers, ...span.headers() } })
      const error = replyError(reply.data)
      if (error) span.fail(error.code, error.message)
      return reply
    } catch (err) {
      span.fail((err as Error).name ?? 'Error', (err as Error).message)
      throw err
    } finally {
      span.end()
    }
  }

  flush(): Promise<void> {
    return this.#bus.flush()
  }

  close(): Promise<void> {
    return this.#bus.close()
  }
}

/** `command.type` and `session.id` of a command, when the payload is one. */
function commandAttributes(data: string): Record<string, string> {
  try {
    const command = JSON.parse(data) as { type?: unknown; session_id?: unknown; turn_id?: unknown }
    const attributes: Record<string, string> = {}
    if (typeof command.type === 'string') attributes['command.type'] = command.type
    if (typeof command.session_id === 'string') attributes['session.id'] = command.session_id
    if (typeof command.turn_id === 'string') attributes['turn.id'] = command.turn_id
    return attributes
  } catch {
    return {}
  }
}

/** The error of a failed command's reply (`{ok: false, error}`). */
function replyError(data: string): { code: string; message: string } | undefined {
  if (!data.startsWith('{"ok":false')) return undefined
  try {
    const { error } = JSON.parse(data) as { error?: { code?: unknown; message?: unknown } }
    return { code: String(error?.code), message: String(error?.message) }
  } catch {
    return undefined
  }
}
