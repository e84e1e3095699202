import { isTurnEnd, type EventOf, type ServiceEvent } from '../../contract/mod.ts'

/** Clock and timers, injectable for tests. */
export interface PulseClock {
  now(): number
  setInterval(fn: () => void, ms: number): unknown
  clearInterval(handle: unknown): void
}

const REAL_CLOCK: PulseClock = {
  now: Date.now,
  setInterval: (fn, ms) => setInterval(fn, ms).unref(),
  clearInterval: (handle) => clearInterval(handle as NodeJS.Timeout),
}

interface RunningTool {
  session_id: string
  turn_id: string | undefined
  name: string
  since: number
  timer: unknown
}

/**
 * `task_boundary` pulses for one WebSocket client (spec §7): while a tool
 * the client saw start (`tool_use`) has no `tool_result` yet, every
 * `intervalMs` it is sent
 * `{event: "task_boundary", session_id, turn_id, data: "tool running", tool: {id, name}, elapsed_ms, ts}`,
 * so proxies with an idle time-out keep the connection. The gateway sends
 * them, not the runner: they are about this connection, so they take no
 * place in the session's event sequence (no `seq`) and are never replayed.
 */
export class TaskPulse {
  readonly #send: (event: EventOf<'task_boundary'>) => void
  readonly #intervalMs: number
  readonly #clock: PulseClock
  readonly #tools = new Map<string, RunningTool>()

  constructor(send: (event: EventOf<'task_boundary'>) => void, intervalMs: number, clock: PulseClock = REAL_CLOCK) {
    this.#send = send
    this.#intervalMs = intervalMs
    this.#clock = clock
  }

  /** Number of tools being timed. */
  get running(): number {
    return this.#tools.size
  }

  /** Sees every event delivered to the client. */
  observe(event: ServiceEvent): void {
    if (this.#intervalMs <= 0) return
    if (event.event === 'tool_use' && event.session_id !== undefined) {
      const key = `${event.session_id}\u0000${event.tool.id}`
      if (this.#tools.has(key)) return
      const tool: RunningTool = { session_id: event.session_id, turn_id: event.turn_id, name: event.tool.name, since: this.#clock.now(), timer: undefined }
      tool.timer = this.#clock.setInterval(() => this.#pulse(event.tool.id, tool), this.#intervalMs)
      this.#tools.set(key, tool)
    } else if (event.event === 'tool_result' && event.session_id !== undefined) {
      this.#end(`${event.session_id}\u0000${event.tool.id}`)
    } else if (isTurnEnd(event) && event.session_id !== undefined) {
      // A turn that ends (or a stop) ends its tools, results or not.
      for (const [key, tool] of this.#tools) {
        if (tool.session_id === event.session_id && (event.turn_id === undefined || tool.turn_id === undefined || tool.turn_id === event.turn_id))
          this.#end(key)
      }
    }
  }

  /** Stops every timer (the connection closed). */
  close(): void {
    for (const key of [...this.#tools.keys()]) this.#end(key)
  }

  #pulse(toolId: string, tool: RunningTool): void {
    const pulse: EventOf<'task_boundary'> = {
      event: 'task_boundary',
      session_id: tool.session_id,
      data: 'tool running',
      tool: { id: toolId, name: tool.name },
      elapsed_ms: Math.max(0, Math.round(this.#clock.now() - tool.since)),
      ts: this.#clock.now(),
    }
    if (tool.turn_id !== undefined) pulse.turn_id = tool.turn_id
    this.#send(pulse)
  }

  #end(key: string): void {
    const tool = this.#tools.get(key)
    if (!tool) return
    this.#clock.clearInterval(tool.timer)
    this.#tools.delete(key)
  }
}
