import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { gatewayUnderTest, type GatewayUnderTest } from '../../../fixtures/gateway.ts'
import { handshake } from '../../../fixtures/ws-handshake.ts'

describe('websocket route - the handshake', () => {
  let gateway: GatewayUnderTest
  beforeAll(async () => {
    gateway = await gatewayUnderTest()
    await gateway.listen()
  })
  afterAll(async () => gateway.close())

  it('handshake - ?session_id= with a last_seq opens', async () => {
    expect(await handshake(`${gateway.wsUrl}?session_id=s1&last_seq=41`)).toEqual({ opened: true })
  })

  it('handshake - a last_seq that is no sequence number is refused with 400 BAD_REQUEST before the upgrade', async () => {
    for (const lastSeq of ['yesterday', '-1', '1&last_seq=2']) {
      const result = await handshake(`${gateway.wsUrl}?session_id=s1&last_seq=${lastSeq}`)
      expect(result, lastSeq).toMatchObject({ opened: false, status: 400, body: { code: 'BAD_REQUEST', message: 'last_seq must be an event sequence number' } })
    }
  })
})
