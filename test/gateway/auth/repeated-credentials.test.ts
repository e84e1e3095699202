/**
 * A request that repeats a credential carrier with different keys is refused
 * through the real HTTP parser (Node keeps only the first `Authorization`
 * header in `request.headers`, so a raw socket sends the request).
 */
import net from 'node:net'
import { afterEach, describe, expect, it } from 'vitest'
import { gatewayUnderTest, type GatewayUnderTest } from '../../fixtures/gateway.ts'

const KEY = 'only-key-5d1e0a'

let gateway: GatewayUnderTest | undefined
afterEach(async () => {
  await gateway?.close()
  gateway = undefined
})

/** Sends `headerLines` as they are and answers the status and body. */
async function rawGet(url: string, path: string, headerLines: string[]): Promise<{ status: number; body: string }> {
  const { hostname, port } = new URL(url)
  const socket = net.connect(Number(port), hostname)
  socket.setTimeout(5_000, () => socket.destroy(new Error('no answer within 5 s')))
  socket.write([`GET ${path} HTTP/1.1`, `Host: ${hostname}:${port}`, 'Connection: close', ...headerLines, '', ''].join('\r\n'))
  const chunks: Buffer[] = []
  for await (const chunk of socket) chunks.push(chunk as Buffer)
  const text = Buffer.concat(chunks).toString('utf8')
  const [head = '', body = ''] = text.split('\r\n\r\n')
  return { status: Number(head.split(' ')[1]), body }
}

describe('guard - repeated credentials', () => {
  it('auth - a second Authorization header with another key is refused with 401, not ignored', async () => {
    gateway = await gatewayUnderTest({ auth: { api_keys: [KEY] } })
    await gateway.listen()
    const one = await rawGet(gateway.url, '/session', [`Authorization: Bearer ${KEY}`])
    expect(one.status).toBe(200)
    const twice = await rawGet(gateway.url, '/session', [`Authorization: Bearer ${KEY}`, 'Authorization: Bearer not-a-key'])
    expect(twice.status).toBe(401)
    expect(twice.body).toContain('UNAUTHORIZED')
    expect(twice.body).toContain('one key')
    const same = await rawGet(gateway.url, '/session', [`Authorization: Bearer ${KEY}`, `Authorization: Bearer ${KEY}`])
    expect(same.status).toBe(200)
  })

  it('auth - two X-API-Key headers with different keys are refused as repeated', async () => {
    gateway = await gatewayUnderTest({ auth: { api_keys: [KEY] } })
    await gateway.listen()
    const twice = await rawGet(gateway.url, '/session', [`X-API-Key: ${KEY}`, 'X-API-Key: not-a-key'])
    expect(twice.status).toBe(401)
    expect(twice.body).toContain('one key')
  })
})
