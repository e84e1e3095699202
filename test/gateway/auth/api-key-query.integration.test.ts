import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startStack, type Stack } from '../../fixtures/stack.ts'

/** `?api_key=` on REST and SSE routes (gateway/auth/credentials.ts), as HotPlex documents it for its clients. */
const KEY = 'hotplex-client-key-1'

describe('api_key query parameter', () => {
  let stack: Stack
  beforeAll(async () => {
    stack = await startStack({ auth: { api_keys: [KEY] } })
  })
  afterAll(async () => {
    await stack.close()
  })

  it.each(['/session', '/v1/sessions'])('rest - %s: the right key passes, a wrong one or none is 401', async (route) => {
    expect((await fetch(`${stack.url}${route}?api_key=${KEY}`)).status).toBe(200)
    expect((await fetch(`${stack.url}${route}?api_key=wrong-key-1`)).status).toBe(401)
    expect((await fetch(`${stack.url}${route}`)).status).toBe(401)
  })

  it('rest - a wrong api_key beside a right header is refused', async () => {
    expect((await fetch(`${stack.url}/session?api_key=wrong-key-1`, { headers: { authorization: `Bearer ${KEY}` } })).status).toBe(401)
  })

  it('sse - /global/event with ?api_key= opens with server.connected naming the directory', async () => {
    const abort = new AbortController()
    try {
      const response = await fetch(`${stack.url}/global/event?api_key=${KEY}&directory=${encodeURIComponent('/work/project')}`, { signal: abort.signal })
      expect(response.status).toBe(200)
      const reader = response.body!.getReader()
      let text = ''
      while (!text.includes('\n\n')) text += new TextDecoder().decode((await reader.read()).value)
      const first = JSON.parse(text.slice(text.indexOf('data: ') + 6, text.indexOf('\n\n'))) as { directory?: string; payload: { type: string } }
      expect(first).toMatchObject({ directory: '/work/project', payload: { type: 'server.connected' } })
    } finally {
      abort.abort()
    }
    expect((await fetch(`${stack.url}/global/event?api_key=wrong-key-1`)).status).toBe(401)
  })
})
