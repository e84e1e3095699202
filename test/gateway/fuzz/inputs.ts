import vm from 'node:vm'
import v8 from 'node:v8'
import fc from 'fast-check'
import { ErrorCodes, okReply, subjects } from '../../../contract/mod.ts'
import type { GatewayUnderTest } from '../../fixtures/gateway.ts'

/**
 * Bad input for the fuzz tests: each generator makes one kind of thing a
 * careless or hostile client sends. Sizes are chosen around the limits the
 * fuzzed gateway is given (FUZZ_LIMIT), so both sides of them are hit.
 */

/** max_body and max_frame of the fuzzed gateways. */
export const FUZZ_LIMIT = 16 * 1024

/** Text that is not JSON: random text, truncated and mangled JSON. */
export const malformedJson = fc
  .oneof(
    fc.string({ maxLength: 200 }),
    fc.json({ maxDepth: 3 }).map((json) => json.slice(0, Math.max(0, json.length - 1))),
    fc.json({ maxDepth: 3 }).map((json) => `${json},`),
    fc.constantFrom('', ' ', '{', '[', '{"type":', '{"type":"execute",}', "{'type':'execute'}", 'NaN', '{"a":1}{"b":2}', '\u0000', '\ufeff{}'),
  )
  .filter((text) => {
    try {
      JSON.parse(text)
      return false
    } catch {
      return true
    }
  })

/** Any JSON value (objects with unknown fields, arrays, scalars). */
export const anyJson = fc.jsonValue({ maxDepth: 4 })

/** Objects shaped like a request of `types`, every field of `fields` with a value of any type (mostly wrong). */
export function wrongTypes(types: readonly string[], fields: readonly string[]) {
  return fc.record(
    {
      type: fc.oneof(fc.constantFrom(...types), fc.anything({ maxDepth: 2 })),
      ...Object.fromEntries(fields.map((field) => [field, fc.anything({ maxDepth: 2, withBigInt: false })])),
    },
    { requiredKeys: [] },
  )
}

/** Unknown fields, of any name and value, beside a `base` object. */
export function withUnknownFields(base: fc.Arbitrary<Record<string, unknown>>) {
  return fc.tuple(base, fc.dictionary(fc.string({ minLength: 1, maxLength: 20 }), anyJson, { maxKeys: 5 })).map(([object, extra]) => ({ ...extra, ...object }))
}

/** Strings around and far over the size limits. */
export const hugeString = fc
  .oneof(fc.integer({ min: FUZZ_LIMIT - 64, max: FUZZ_LIMIT + 64 }), fc.integer({ min: 2 * FUZZ_LIMIT, max: 3 * FUZZ_LIMIT }))
  .map((length) => 'é'.repeat(Math.ceil(length / 2)))

/**
 * JSON nested deeper than any schema: arrays, objects, and under known
 * fields; up to twice FUZZ_LIMIT long, so both the parser and the size
 * limit see it (still under the WebSocket hard cap, beyond which `ws` closes).
 */
export const deepNesting = fc.tuple(fc.constantFrom('array', 'object', 'field'), fc.double({ min: 0.01, max: 2, noNaN: true })).map(([kind, share]) => {
  const bytesPerLevel = kind === 'array' ? 2 : kind === 'object' ? 6 : 8
  const depth = Math.max(1, Math.floor((share * FUZZ_LIMIT) / bytesPerLevel))
  if (kind === 'array') return '['.repeat(depth) + ']'.repeat(depth)
  if (kind === 'object') return '{"a":'.repeat(depth) + '1' + '}'.repeat(depth)
  return `{"type":${'['.repeat(depth)}${']'.repeat(depth)},"prompt":${'{"x":'.repeat(depth)}1${'}'.repeat(depth)}}`
})

/** Byte sequences that are not UTF-8. */
export const invalidUtf8 = fc
  .tuple(
    fc.string({ maxLength: 40 }),
    fc.constantFrom([0xff], [0xc3, 0x28], [0xe2, 0x82], [0xed, 0xa0, 0x80], [0xf8, 0x88, 0x80, 0x80, 0x80], [0x80], [0xc0, 0xaf]),
    fc.string({ maxLength: 40 }),
  )
  .map(([before, bad, after]) => Buffer.concat([Buffer.from(`{"type":"execute","prompt":"${before}`), Buffer.from(bad), Buffer.from(`${after}"}`)]))

/** True for a well-formed error body: a registered code and a message that says something, briefly. */
export function isClearError(error: unknown): boolean {
  const body = error as { code?: unknown; message?: unknown } | undefined
  return (
    typeof body?.code === 'string' &&
    Object.hasOwn(ErrorCodes, body.code) &&
    typeof body.message === 'string' &&
    body.message.length > 0 &&
    body.message.length <= 1_000
  )
}

/** Answers the `version` command like a runner would, so a valid request can succeed on a runner-less gateway. */
export function answerVersion(gateway: GatewayUnderTest, prefix = 'test'): void {
  gateway.bus.subscribe(subjects(prefix).control, (msg) => msg.respond(okReply('version', { version: '9.9.9 (Fuzz)', engine: 'fuzz' })))
}

/** A full garbage collection (the fuzz tests measure heap growth). */
export function collectGarbage(): () => void {
  v8.setFlagsFromString('--expose-gc')
  const gc = vm.runInNewContext('gc') as () => void
  return () => {
    gc()
    gc()
  }
}

/** Heap in use after a full collection. */
export function settledHeap(gc: () => void): number {
  gc()
  return process.memoryUsage().heapUsed
}
