/**
 * Issue 16, "Memory and availability": a WebSocket client that stops reading
 * made the gateway buffer everything (226 MB → 2.14 GB in 15 s). The service
 * as a real process, a big turn, one client that pauses its socket: the
 * gateway's RSS stays bounded while the turn runs, the client is closed with
 * 1013, and a client that reads gets the whole turn.
 */
import { mkdtemp, rm } from 'node:fs/promises'
import type { Socket } from 'node:net'
import os from 'node:os'
import path from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import WebSocket from 'ws'
import { rssMiB } from '../fixtures/load.ts'
import { startServiceProcess, type ServiceProcess } from '../fixtures/service-process.ts'
import { FAKE_CLAUDE } from '../fixtures/stack.ts'
import { WsClient } from '../fixtures/ws-client.ts'

const PARTS = 1_000_000
/**
 * Growth of the service's RSS over the turn, from just before it to its
 * highest. Measured on the 2-core machine (Node 24, 2026-11-24) with the
 * default 8 MiB send buffer: +110 MiB for a 200,000-event turn, +148 MiB for
 * 600,000, +166–172 MiB for 1,000,000 (the reading client's traffic, the
 * event log's newest 10,000 events, V8's heap grown under the allocation
 * rate: it flattens). With the buffer unbounded (`limits.ws_send_buffer: 4GiB`,
 * what the gateway did before issue 16): +172, +531 and +792 MiB. Hence a
 * million events, where the two are far apart, and 350 MiB: twice the highest
 * bounded growth, under half the unbounded one.
 */
const GROWTH_BOUND_MIB = 350

let dir: string | undefined
let service: ServiceProcess | undefined
const sockets: WebSocket[] = []

afterEach(async () => {
  for (const socket of sockets.splice(0)) socket.terminate()
  await service?.stop('SIGKILL')
  if (dir) await rm(dir, { recursive: true, force: true })
  dir = service = undefined
})

function socketOf(client: WsClient): Socket {
  return (client.socket as unknown as { _socket: Socket })._socket
}

/** A reading client that keeps nothing: resolves with the `completed` of `sessionId` (and how many answers came before it). */
async function follow(url: string, sessionId: string, timeoutMs: number): Promise<{ completed: Record<string, unknown>; answers: number }> {
  const socket = new WebSocket(`${url}?session_id=${sessionId}`)
  sockets.push(socket)
  let answers = 0
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no completed within ${timeoutMs} ms (${answers} answers)`)), timeoutMs)
    socket.on('error', reject)
    socket.on('message', (data: Buffer) => {
      const text = data.toString()
      if (text.startsWith('{"event":"answer"')) return void answers++
      if (!text.includes('"completed"')) return
      clearTimeout(timer)
      resolve({ completed: JSON.parse(text) as Record<string, unknown>, answers })
    })
  })
}

describe('native websocket - a client that stops reading, service process', () => {
  it(`memory - a ${PARTS.toLocaleString('en')}-event turn to a client that pauses its socket: RSS grows by less than ${GROWTH_BOUND_MIB} MiB, the client is closed with 1013`, async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'ar-slow-reader-'))
    const config = {
      server: { port: 0, shutdown_grace: '1s' },
      engine: { ...FAKE_CLAUDE, env: { CLAUDE_CONFIG_DIR: path.join(dir, 'claude') } },
      session: { work_dir: path.join(dir, 'sessions'), marker_dir: path.join(dir, 'markers') },
      log: { level: 'info' },
    }
    service = await startServiceProcess('dev', config, dir)
    const wsUrl = service.address!.replace('http', 'ws') + '/ws/v1/agent'
    const pid = service.child.pid!

    // Warm up (the CLI's start, the code paths of a turn), then the baseline.
    const warm = await WsClient.connect(wsUrl)
    warm.send({ type: 'execute', session_id: 'warm', prompt: 'burst: 2000', request_id: 'w' })
    await warm.next((msg) => msg.request_id === 'w' && msg.event === 'completed', 30_000)
    await warm.close()
    const before = await rssMiB(pid)

    let peak = before
    const sampler = setInterval(
      () =>
        void rssMiB(pid).then(
          (mib) => (peak = Math.max(peak, mib)),
          () => {},
        ),
      100,
    )
    try {
      const reader = follow(wsUrl, 'big', 120_000)
      const slow = await WsClient.connect(wsUrl)
      sockets.push(slow.socket)
      const closed = new Promise<number>((resolve) => slow.socket.once('close', (code) => resolve(code)))
      slow.send({ type: 'execute', session_id: 'big', prompt: `burst: ${PARTS}`, request_id: 'big' })
      socketOf(slow).pause()

      const { completed, answers } = await reader
      expect(completed).toMatchObject({ event: 'completed', session_id: 'big' })
      expect(answers).toBe(PARTS)
      const afterTurn = await rssMiB(pid)
      console.log(`memory - service RSS ${before.toFixed(0)} MiB before the turn, ${peak.toFixed(0)} MiB at most, ${afterTurn.toFixed(0)} MiB after`)
      expect(peak - before, `RSS growth in MiB (${before.toFixed(0)} → ${peak.toFixed(0)})`).toBeLessThan(GROWTH_BOUND_MIB)

      // What the gateway did about the client: closed it (after what was buffered) once it would not read.
      socketOf(slow).resume()
      const code = await Promise.race([closed, new Promise<string>((resolve) => setTimeout(() => resolve('not closed within 10 s'), 10_000))])
      expect(code).toBe(1013)
    } finally {
      clearInterval(sampler)
    }
    expect({ exitCode: service.child.exitCode, signal: service.child.signalCode }).toEqual({ exitCode: null, signal: null })
  }, 150_000)
})
