/**
 * Property-based fuzzing of /ws/v1/agent frames: malformed JSON, wrong types,
 * unknown fields, huge strings, deep nesting, binary frames. Every frame is
 * answered with a clear error event (or its proper answer), the connection
 * and the server keep serving, and the heap does not grow with the inputs.
 */
import fc from 'fast-check'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import WebSocket from 'ws'
import { gatewayUnderTest, type GatewayUnderTest } from '../../fixtures/gateway.ts'
import {
  answerVersion,
  anyJson,
  collectGarbage,
  deepNesting,
  FUZZ_LIMIT,
  hugeString,
  invalidUtf8,
  isClearError,
  malformedJson,
  settledHeap,
  withUnknownFields,
  wrongTypes,
} from './inputs.ts'

/** A connection that hands out the answers to one frame at a time. */
class FuzzSocket {
  readonly socket: WebSocket
  readonly #queue: unknown[] = []
  #waiting: ((msg: unknown) => void) | undefined

  private constructor(socket: WebSocket) {
    this.socket = socket
    socket.on('message', (data) => {
      const msg = JSON.parse(data.toString())
      if (this.#waiting) {
        const resolve = this.#waiting
        this.#waiting = undefined
        resolve(msg)
      } else this.#queue.push(msg)
    })
  }

  static async open(url: string): Promise<FuzzSocket> {
    const socket = new WebSocket(url)
    const fuzz = new FuzzSocket(socket)
    await new Promise((resolve, reject) => socket.once('open', resolve).once('error', reject))
    await fuzz.next() // server.connected
    return fuzz
  }

  next(timeoutMs = 5_000): Promise<any> {
    if (this.#queue.length > 0) return Promise.resolve(this.#queue.shift())
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('no answer to the frame')), timeoutMs)
      this.#waiting = (msg) => {
        clearTimeout(timer)
        resolve(msg)
      }
    })
  }

  /** Sends a frame and returns its answer. */
  async ask(frame: string | Buffer, binary = false): Promise<any> {
    this.socket.send(frame, { binary })
    return this.next()
  }

  close(): void {
    this.socket.close()
  }
}

/** The error body of an answer in either dialect (native `error` event, quick-start `{type: "error", payload}`). */
function errorOf(msg: any): unknown {
  if (msg?.event === 'error') return msg.error
  if (msg?.type === 'error') return msg.payload?.error
  return undefined
}

const FRAME_TYPES = ['execute', 'stop', 'stats', 'version', 'prompt'] as const
const FRAME_FIELDS = ['session_id', 'prompt', 'instructions', 'work_dir', 'request_id', 'reason', 'content']

/** Frames that must each be answered by an error event. */
const badFrames: fc.Arbitrary<{ frame: string | Buffer; binary?: boolean }> = fc.oneof(
  malformedJson.map((frame) => ({ frame })),
  anyJson
    .filter((value) => typeof value !== 'object' || value === null || Array.isArray(value) || !('type' in value))
    .map((value) => ({ frame: JSON.stringify(value) })),
  withUnknownFields(wrongTypes(FRAME_TYPES, FRAME_FIELDS) as fc.Arbitrary<Record<string, unknown>>)
    .filter((frame) => frame.type !== 'session_start')
    .map((frame) => ({ frame: JSON.stringify(frame) })),
  hugeString.map((text) => ({ frame: JSON.stringify({ type: 'execute', prompt: text }) })),
  hugeString.map((text) => ({ frame: JSON.stringify({ type: text }) })),
  deepNesting.map((frame) => ({ frame })),
  fc.uint8Array({ maxLength: 64 }).map((bytes) => ({ frame: Buffer.from(bytes), binary: true })),
)

describe('fuzz - WebSocket frames', () => {
  let gateway: GatewayUnderTest
  beforeAll(async () => {
    gateway = await gatewayUnderTest({ limits: { max_frame: FUZZ_LIMIT } })
    answerVersion(gateway)
    await gateway.listen()
  })
  afterAll(async () => gateway.close())

  it('fuzz - every bad frame gets one clear error event and the connection keeps serving', async () => {
    const socket = await FuzzSocket.open(gateway.wsUrl)
    try {
      await fc.assert(
        fc.asyncProperty(badFrames, async ({ frame, binary }) => {
          const answer = await socket.ask(frame, binary)
          const error = errorOf(answer)
          if (error === undefined) {
            // A generated frame may happen to be a valid `version` request: then it is served
            // (in the quick-start shape once a generated valid `prompt` switched the dialect).
            const served = answer as Record<string, unknown>
            const version = served.type === 'version' ? { event: 'version', data: (served.payload as Record<string, unknown>).content } : served
            expect(version, String(frame).slice(0, 300)).toMatchObject({ event: 'version', data: '9.9.9 (Fuzz)' })
            expect(JSON.parse(String(frame))).toMatchObject({ type: 'version' })
            return
          }
          expect(isClearError(error), JSON.stringify(answer).slice(0, 300)).toBe(true)
          expect((error as { code: string }).code).not.toBe('INTERNAL')
        }),
        { numRuns: 400 },
      )
      // The same connection still answers a valid request (in the quick-start shape if a generated
      // frame happened to be a valid `prompt`, which switches the connection's dialect).
      const answer = (await socket.ask(JSON.stringify({ type: 'version', request_id: 'after' }))) as Record<string, unknown>
      const version = (answer.payload as Record<string, unknown> | undefined) ?? answer
      expect(version).toMatchObject({ request_id: 'after' })
      expect(version.data ?? version.content).toBe('9.9.9 (Fuzz)')
    } finally {
      socket.close()
    }
  })

  it('fuzz - valid frames with unknown fields are served as if the fields were not there', async () => {
    const socket = await FuzzSocket.open(gateway.wsUrl)
    try {
      await fc.assert(
        fc.asyncProperty(withUnknownFields(fc.record({ type: fc.constant('version'), request_id: fc.integer() })), async (frame) => {
          expect(await socket.ask(JSON.stringify(frame))).toMatchObject({ event: 'version', request_id: frame.request_id, data: '9.9.9 (Fuzz)' })
        }),
        { numRuns: 100 },
      )
    } finally {
      socket.close()
    }
  })

  it('fuzz - a text frame that is not UTF-8 closes that connection with 1007 (RFC 6455); the server serves on', async () => {
    await fc.assert(
      fc.asyncProperty(invalidUtf8, async (bytes) => {
        const socket = await FuzzSocket.open(gateway.wsUrl)
        const closed = new Promise<number>((resolve) => socket.socket.once('close', (code) => resolve(code)))
        socket.socket.send(bytes, { binary: false })
        expect(await closed).toBe(1007)
      }),
      { numRuns: 25 },
    )
    const after = await FuzzSocket.open(gateway.wsUrl)
    expect(await after.ask('{"type":"version","request_id":1}')).toMatchObject({ event: 'version' })
    after.close()
  })

  it('fuzz - the heap stays flat over thousands of bad frames', async () => {
    const gc = collectGarbage()
    const socket = await FuzzSocket.open(gateway.wsUrl)
    const inputs = fc.sample(badFrames, { numRuns: 3_000, seed: 42 })
    const run = async () => {
      for (const { frame, binary } of inputs) await socket.ask(frame, binary)
    }
    await run() // warm-up: code paths compiled, caches filled
    const before = settledHeap(gc)
    await run()
    await run()
    const growth = settledHeap(gc) - before
    socket.close()
    // 6,000 frames; a leak of even 1 KiB each would show as 6 MB.
    expect(growth).toBeLessThan(3 * 1024 * 1024)
  })
})
