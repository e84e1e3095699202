import net from 'node:net'
import v8 from 'node:v8'
import vm from 'node:vm'
import { afterEach, describe, expect, it } from 'vitest'
import { Command, emptyStats, okReply, subjects, type CommandOf } from '../../../contract/mod.ts'
import { cutToBytes, MAX_ANSWER_BYTES } from '../../../gateway/turns/answer-text.ts'
import { gatewayUnderTest, type GatewayUnderTest } from '../../fixtures/gateway.ts'
import { SseClient } from '../../fixtures/sse-client.ts'

v8.setFlagsFromString('--expose-gc')
const gc = vm.runInNewContext('gc') as () => void

/** Heap in use after a full collection: what is really kept. */
function heapKept(): number {
  gc()
  gc()
  return process.memoryUsage().heapUsed
}

/** A runner on the gateway's bus that takes every execute and lets the test write the turn's events. */
function fakeRunner(gateway: GatewayUnderTest) {
  const s = subjects('test')
  const executes: CommandOf<'execute'>[] = []
  const waiting = new Set<() => void>()
  let seq = 0
  gateway.bus.subscribe(s.place, (msg) => {
    const command = Command.parse(JSON.parse(msg.data))
    if (command.type !== 'execute') return msg.respond(okReply('close', { closed: true }))
    msg.respond(okReply('execute', { turn_id: command.turn_id, queued: 0, after_seq: seq }))
    executes.push(command)
    for (const wake of waiting) wake()
  })
  return {
    /** The next execute (the n-th, from 1). */
    async execute(n = 1): Promise<CommandOf<'execute'>> {
      while (executes.length < n) await new Promise<void>((resolve) => waiting.add(resolve))
      return executes[n - 1]!
    },
    emit(command: CommandOf<'execute'>, event: Record<string, unknown>): void {
      gateway.bus.publish(
        s.events(command.session_id),
        JSON.stringify({ session_id: command.session_id, turn_id: command.turn_id, seq: ++seq, ts: Date.now(), ...event }),
      )
    },
    complete(command: CommandOf<'execute'>): void {
      this.emit(command, { event: 'completed', data: '', stats: emptyStats(), turn_stats: emptyStats() })
    },
  }
}

let gateway: GatewayUnderTest | undefined
afterEach(async () => {
  await gateway?.close()
  gateway = undefined
})

async function start() {
  gateway = await gatewayUnderTest()
  const runner = fakeRunner(gateway)
  await gateway.listen()
  return { gateway, runner }
}

describe('chat route - bounded memory', () => {
  it('event-stream - the stream opens at once and each event is written as it comes: the first arrives before the turn ends', async () => {
    const { gateway, runner } = await start()
    // The answer (its headers) comes at once, before the turn has anything to say; the client is not left waiting.
    const opened = SseClient.post(`${gateway.url}/v1/agent/chat`, { session_id: 'live', message: 'go' })
    const stream = await Promise.race([opened, new Promise<undefined>((resolve) => setTimeout(resolve, 5_000))])
    expect(stream).toBeDefined()
    if (!stream) return
    const command = await runner.execute()
    runner.emit(command, { event: 'answer', data: 'first' })
    expect(await stream.next((event) => event.event === 'answer')).toMatchObject({ data: 'first', session_id: 'live' })
    expect(stream.ended).toBe(false)
    runner.complete(command)
    await stream.untilEnd()
    expect(stream.data.map((event) => event.event)).toEqual(['answer', 'completed'])
  })

  it('event-stream - a client that stops reading is cut off, and the gateway keeps nothing of its turn', async () => {
    const { gateway, runner } = await start()
    const body = JSON.stringify({ session_id: 'stalled', message: 'go' })
    const socket = net.connect({ host: '127.0.0.1', port: Number(new URL(gateway.url).port) })
    await new Promise<void>((resolve) => socket.once('connect', resolve))
    const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()))
    socket.on('error', () => {})
    socket.write(
      `POST /v1/agent/chat HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
    )
    // The client never reads.
    socket.pause()
    const command = await runner.execute()
    const before = heapKept()
    // 100 MiB of events for a client that reads none of them, the turn still running.
    const text = 'y'.repeat(256 * 1024)
    for (let i = 0; i < 400; i++) {
      runner.emit(command, { event: 'answer', data: text })
      await new Promise((resolve) => setImmediate(resolve))
    }
    const kept = heapKept() - before
    expect(kept).toBeLessThan(32 * 1024 * 1024)
    // The stream was cut: a client that reads now finds the connection closed.
    socket.resume()
    await closed
    runner.complete(command)
  })

  it(`json - an answer over ${MAX_ANSWER_BYTES} bytes is cut there, and the body says truncated: true`, async () => {
    const { gateway, runner } = await start()
    const answered = fetch(`${gateway.url}/v1/agent/chat`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ session_id: 'long', message: 'go' }),
    })
    const command = await runner.execute()
    const block = 'z'.repeat(1024 * 1024)
    const blocks = Math.ceil(MAX_ANSWER_BYTES / block.length) + 2
    for (let i = 0; i < blocks; i++) runner.emit(command, { event: 'answer', data: block })
    runner.complete(command)
    const response = await answered
    expect(response.status).toBe(200)
    const answer = (await response.json()) as { answer: string; truncated?: boolean; status: string; stats: unknown }
    // Field by field: a diff of a 10 MB answer would not fit in an error message.
    expect(answer.truncated).toBe(true)
    expect(answer.status).toBe('completed')
    expect(answer.stats).toMatchObject({ turns: 0 })
    expect(Buffer.byteLength(answer.answer)).toBeLessThanOrEqual(MAX_ANSWER_BYTES)
    expect(answer.answer.length).toBeGreaterThan(MAX_ANSWER_BYTES - block.length)
    expect(answer.answer.startsWith(`${block}\n\n${block}`)).toBe(true)
  })

  it('json - an answer under the cap is whole and has no truncated field', async () => {
    const { gateway, runner } = await start()
    const answered = fetch(`${gateway.url}/v1/agent/chat`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ session_id: 'short', message: 'go' }),
    })
    const command = await runner.execute()
    runner.emit(command, { event: 'answer', data: 'one' })
    runner.emit(command, { event: 'answer', data: 'two' })
    runner.complete(command)
    const answer = (await (await answered).json()) as Record<string, unknown>
    expect(answer).toMatchObject({ answer: 'one\n\ntwo', status: 'completed' })
    expect(answer).not.toHaveProperty('truncated')
  })
})

describe('chat route - cutting an answer at a byte count', () => {
  it.each([
    { text: 'abcdef', bytes: 4, cut: 'abcd' },
    { text: 'abc', bytes: 10, cut: 'abc' },
    { text: 'abc', bytes: 0, cut: '' },
    // é is 2 bytes, € 3, 😀 4 (two UTF-16 units): never half a character.
    { text: 'aéé', bytes: 4, cut: 'aé' },
    { text: '€€', bytes: 5, cut: '€' },
    { text: 'a😀b', bytes: 4, cut: 'a' },
    { text: 'a😀b', bytes: 5, cut: 'a😀' },
  ])('$text at $bytes bytes → $cut', ({ text, bytes, cut }) => {
    expect(cutToBytes(text, bytes)).toBe(cut)
    expect(Buffer.byteLength(cutToBytes(text, bytes))).toBeLessThanOrEqual(bytes)
  })
})
