import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { requireBwrap, canaryServer } from '../../fixtures/escape-corpus.ts'
import { stackPerTest } from '../../fixtures/stack.ts'
import type { WsClient } from '../../fixtures/ws-client.ts'

type Canary = NonNullable<Awaited<ReturnType<typeof canaryServer>>>

/** engine.network with the fake CLI: what a tool command can connect to from inside the sandbox. */
describe('sandbox network', () => {
  requireBwrap()
  const stacks = stackPerTest()
  let model: Canary
  let other: Canary
  let extra: Canary
  beforeAll(async () => {
    model = (await canaryServer())!
    other = (await canaryServer())!
    extra = (await canaryServer())!
  })
  afterAll(async () => {
    await Promise.all([model?.close(), other?.close(), extra?.close()])
  })
  let counts: number[] = []
  afterEach(() => {
    counts = []
  })

  const open = (network: string, networkAllow: string[] = [], forwarder = 'auto') => {
    counts = [model.connections(), other.connections(), extra.connections()]
    return stacks.open({
      engine: { env: { ANTHROPIC_BASE_URL: `http://127.0.0.1:${model.port}` }, network, network_allow: networkAllow },
      sandbox: { forwarder },
    })
  }
  const newConnections = () => [model.connections() - counts[0]!, other.connections() - counts[1]!, extra.connections() - counts[2]!]
  let turn = 0
  const run = async (client: WsClient, command: string) => {
    const id = `n-${++turn}`
    client.send({ type: 'execute', session_id: 'net', request_id: id, prompt: `tool: ${command}` })
    await client.next((msg) => msg.request_id === id && msg.event === 'completed', 30_000)
    return String(client.messages.find((msg) => msg.request_id === id && msg.event === 'tool_result')?.data)
  }

  // socat is installed where the tests run (.ci/run makes sure), so both forwarders are tried.
  it.each(['socat', 'node'])(
    'allowlist (%s forwarder) - the model API on loopback is reached at its own address, directly and through the proxy; nothing else is',
    async (forwarder) => {
      const { client } = await open('allowlist', [], forwarder)
      expect(await run(client, `curl -s -m 5 http://127.0.0.1:${model.port}/`)).toContain('canary')
      // Through HTTPS_PROXY as a client that tunnels (CONNECT), and as one that sends absolute-form requests.
      expect(await run(client, `curl -s -m 5 --noproxy '' -p -x "$HTTPS_PROXY" http://127.0.0.1:${model.port}/`)).toContain('canary')
      expect(await run(client, `curl -s -m 5 --noproxy '' -x "$HTTP_PROXY" http://127.0.0.1:${model.port}/`)).toContain('canary')
      const denied = await run(
        client,
        `curl -s -m 5 http://127.0.0.1:${other.port}/; curl -s -m 5 --noproxy '' -p -x "$HTTPS_PROXY" http://127.0.0.1:${other.port}/; curl -s -m 5 --noproxy '' -x "$HTTP_PROXY" http://127.0.0.1:${other.port}/; echo done`,
      )
      expect(denied).not.toContain('canary')
      expect(denied).toContain('not on the sandbox')
      expect(newConnections()).toEqual([3, 0, 0])
    },
  )

  it('allowlist - engine.network_allow adds a host:port', async () => {
    const { client } = await open('allowlist', [`127.0.0.1:${extra.port}`])
    expect(await run(client, `curl -s -m 5 --noproxy '' -p -x "$HTTPS_PROXY" http://127.0.0.1:${extra.port}/`)).toContain('canary')
    expect(newConnections()).toEqual([0, 0, 1])
  })

  it('none - not even the model API', async () => {
    const { client } = await open('none')
    expect(await run(client, `curl -s -m 5 http://127.0.0.1:${model.port}/; echo done`)).not.toContain('canary')
    expect(newConnections()).toEqual([0, 0, 0])
  })

  it('open - the host network as it is (loopback included): open is not contained', async () => {
    const { client } = await open('open')
    expect(await run(client, `curl -s -m 5 http://127.0.0.1:${other.port}/`)).toContain('canary')
    expect(newConnections()).toEqual([0, 1, 0])
  })
})
