import { describe, expect, it } from 'vitest'
import { methodNotFound, RpcError, RpcPeer } from '../../../../runner/engine/acp/rpc.ts'

function peer(onRequest: (method: string, params: unknown) => Promise<unknown> = (m) => Promise.reject(methodNotFound(m))) {
  const written: any[] = []
  const seen: { notifications: [string, unknown][]; noise: string[] } = { notifications: [], noise: [] }
  const rpc = new RpcPeer((line) => written.push(JSON.parse(line)), {
    onNotification: (method, params) => seen.notifications.push([method, params]),
    onRequest,
    onNoise: (line) => seen.noise.push(line),
  })
  return { rpc, written, seen }
}

describe('acp rpc - peer', () => {
  it('numbers its requests and resolves each with its answer, whatever the order', async () => {
    const { rpc, written } = peer()
    const a = rpc.request('initialize', { protocolVersion: 1 })
    const b = rpc.request('session/new', { cwd: '/w' })
    expect(written).toEqual([
      { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: 1 } },
      { jsonrpc: '2.0', id: 2, method: 'session/new', params: { cwd: '/w' } },
    ])
    // codex-acp puts `result` before `id` (recorded); order of keys and of answers does not matter.
    rpc.receive('{"jsonrpc":"2.0","result":{"sessionId":"s"},"id":2}')
    rpc.receive('{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":1}}')
    await expect(a).resolves.toEqual({ protocolVersion: 1 })
    await expect(b).resolves.toEqual({ sessionId: 's' })
  })

  it('an error answer rejects with its code, message and data', async () => {
    const { rpc } = peer()
    const load = rpc.request('session/load', {})
    rpc.receive('{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"Internal error","data":{"details":"No previous sessions found for this project."}}}')
    const err = await load.catch((e: unknown) => e)
    expect(err).toBeInstanceOf(RpcError)
    expect(err).toMatchObject({ code: -32603, message: 'Internal error', data: { details: 'No previous sessions found for this project.' } })
  })

  it('answers the agent’s requests (string ids too, as codex-acp sends), errors for unknown methods', async () => {
    const { rpc, written } = peer((method) =>
      method === 'session/request_permission' ? Promise.resolve({ outcome: { outcome: 'cancelled' } }) : Promise.reject(methodNotFound(method)),
    )
    rpc.receive('{"jsonrpc":"2.0","method":"session/request_permission","params":{},"id":"1e85-uuid"}')
    rpc.receive('{"jsonrpc":"2.0","id":0,"method":"fs/read_text_file","params":{}}')
    await new Promise((r) => setImmediate(r))
    expect(written).toEqual([
      { jsonrpc: '2.0', id: '1e85-uuid', result: { outcome: { outcome: 'cancelled' } } },
      { jsonrpc: '2.0', id: 0, error: { code: -32601, message: 'Method not found: fs/read_text_file' } },
    ])
  })

  it('passes notifications on and reports what is not JSON-RPC as noise', () => {
    const { rpc, seen } = peer()
    rpc.receive('{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s"}}')
    rpc.receive('Ripgrep is not available.')
    rpc.receive('{"not":"rpc"}')
    rpc.receive('   ')
    expect(seen.notifications).toEqual([['session/update', { sessionId: 's' }]])
    expect(seen.noise).toEqual(['Ripgrep is not available.', '{"not":"rpc"}'])
  })

  it('close fails the requests still waiting and refuses new ones; nothing more is written', async () => {
    const { rpc, written } = peer()
    const waiting = rpc.request('session/prompt', {})
    rpc.close(new Error('the agent closed its output'))
    await expect(waiting).rejects.toThrow('the agent closed its output')
    await expect(rpc.request('session/prompt', {})).rejects.toThrow('the agent closed its output')
    rpc.notify('session/cancel', {})
    expect(written).toHaveLength(1)
  })
})
