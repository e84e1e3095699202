import type { WebSocket } from 'ws'

/** Timer functions, injectable for tests. */
export interface Timers {
  setInterval(fn: () => void, ms: number): unknown
  clearInterval(handle: unknown): void
}

const REAL_TIMERS: Timers = {
  setInterval: (fn, ms) => setInterval(fn, ms).unref(),
  clearInterval: (handle) => clearInterval(handle as NodeJS.Timeout),
}

/**
 * WebSocket keep-alive: a ping every `intervalMs`. A client that has not
 * answered the previous ping with a pong by the next tick is gone (a dead
 * peer, a cut network that sent no FIN): its connection is terminated, which
 * frees it and detaches it from its sessions. So a dead client is found
 * within two intervals, and idle proxies see traffic every interval.
 * Returns the stop function; it also stops when the socket closes.
 */
export function keepAlive(socket: WebSocket, intervalMs: number, timers: Timers = REAL_TIMERS): () => void {
  if (intervalMs <= 0) return () => {}
  let answered = true
  const onPong = () => {
    answered = true
  }
  socket.on('pong', onPong)
  const handle = timers.setInterval(() => {
    if (!answered) {
      stop()
      socket.terminate()
      return
    }
    answered = false
    try {
      socket.ping()
    } catch {
      // The socket is closing; its close event stops this.
    }
  }, intervalMs)
  const stop = () => {
    timers.clearInterval(handle)
    socket.off('pong', onPong)
    socket.off('close', stop)
  }
  socket.on('close', stop)
  return stop
}
