import { describe, expect, it } from 'vitest'
import { isPlainAck } from '../../state/jetstream-publisher.ts'

const bytes = (text: string) => new TextEncoder().encode(text)

describe('JetStreamPublisher - which acknowledgements skip the parse', () => {
  it.each([
    // nats-server 2.9's answers to a publish (server/stream.go)
    ['{"stream":"EVENTS","seq":12}', true],
    ['{"stream":"EVENTS","seq":12,"duplicate":true}', true],
    ['{"stream":"EVENTS","domain":"hub","seq":3}', true],
    ['{"error":{"code":503,"err_code":10077,"description":"maximum messages exceeded"},"stream":"EVENTS","seq":0}', false],
    ['{"stream":"EVENTS","error":{"code":400,"description":"bad"}}', false],
    ['', false],
    ['not json', false],
    ['{"seq":12}', false],
  ])('%j: plain success %s', (text, plain) => {
    expect(isPlainAck(bytes(text))).toBe(plain)
  })

  it('reads the bytes where they sit in a larger buffer (a message is a view into the read chunk)', () => {
    const chunk = bytes('xx{"error":{"code":503}}{"stream":"S","seq":1}yy')
    expect(isPlainAck(chunk.subarray(2, 24))).toBe(false)
    expect(isPlainAck(chunk.subarray(24, chunk.length - 2))).toBe(true)
  })
})
