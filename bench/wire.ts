import { readFileSync } from 'node:fs'
import WebSocket from 'ws'

/**
 * A lean benchmark client of one session over one WebSocket. The native
 * protocol and HotPlex's share the execute frame and the event names
 * (`answer`, `completed`, `error`); messages are looked at as text, never
 * parsed, so the client costs the same whichever relay it measures.
 */
export class SessionClient {
  readonly #socket: WebSocket
  #requestId = 0
  #onMessage: ((text: string) => void) | undefined

  private constructor(socket: WebSocket) {
    this.#socket = socket
    socket.on('message', (data: Buffer) => this.#onMessage?.(data.toString()))
  }

  static connect(url: string): Promise<SessionClient> {
    return new Promise((resolve, reject) => {
      const socket = new WebSocket(url)
      socket.once('open', () => resolve(new SessionClient(socket)))
      socket.once('error', reject)
    })
  }

  /** Runs one turn; `onAnswer` sees each answer event's text. Resolves with the number of answers. */
  turn(sessionId: string, prompt: string, onAnswer?: (text: string) => void, timeoutMs = 120_000): Promise<number> {
    const requestId = ++this.#requestId
    let answers = 0
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`turn "${prompt}" of ${sessionId}: no end within ${timeoutMs} ms (${answers} answers)`)), timeoutMs)
      this.#onMessage = (text) => {
        if (text.includes('"event":"answer"')) {
          answers++
          onAnswer?.(text)
        } else if (text.includes('"event":"completed"') || text.includes('"event":"error"')) {
          clearTimeout(timer)
          this.#onMessage = undefined
          if (text.includes('"event":"error"')) reject(new Error(`turn "${prompt}" of ${sessionId} failed: ${text.slice(0, 300)}`))
          else resolve(answers)
        }
      }
      this.#socket.send(JSON.stringify({ type: 'execute', session_id: sessionId, prompt, request_id: requestId }))
    })
  }

  close(): Promise<void> {
    return new Promise((resolve) => {
      if (this.#socket.readyState === WebSocket.CLOSED) return resolve()
      this.#socket.once('close', () => resolve())
      this.#socket.close()
    })
  }
}

/** The write time a `stamped:` answer carries (`t=<epoch ms>`), in either protocol's event. */
export function stampOf(text: string): number {
  return Number.parseFloat(text.slice(text.indexOf('"t=') + 3))
}

/** CPU seconds (user + system, all threads) the processes used so far. */
export function cpuSeconds(pids: readonly number[]): number {
  let ticks = 0
  for (const pid of pids) {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    ticks += Number(fields[11]) + Number(fields[12])
  }
  return ticks / CLOCK_TICKS
}

/** Linux's USER_HZ, what /proc/<pid>/stat counts in. */
const CLOCK_TICKS = 100

/** Resident memory of a process, in bytes. */
export function rssBytes(pid: number): number {
  const kb = /VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]
  return Number(kb) * 1024
}

export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b)
  const mid = sorted.length >> 1
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2
}
