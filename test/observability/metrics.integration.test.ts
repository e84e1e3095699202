import { describe, expect, it, vi } from 'vitest'
import { stackPerTest } from '../fixtures/stack.ts'
import { sample, scrape } from './prometheus.ts'

/**
 * Every metric of spec §6.3 moves with real traffic through the in-process
 * stack (dev mode: gateway, in-process bus, runner, fake CLI), and only once.
 */
describe('metrics', () => {
  const stacks = stackPerTest()
  const start = stacks.open
  const metric = async (name: string, labels: Record<string, string> = {}) => sample(await scrape(stacks.current()!.stack.url), name, labels) ?? 0

  it('sessions - active rises while a session has its CLI and falls when it is reaped or stopped; total counts new and resumed starts', async () => {
    // Long enough that neither CLI is reaped before the check below, however slow the machine.
    const { client } = await start({ engine: { idle_timeout: '2s' } })
    expect(await metric('service_sessions_active')).toBe(0)
    expect(await metric('service_sessions_total', { kind: 'new' })).toBe(0)

    client.send({ type: 'execute', session_id: 'm-s1', prompt: 'hello' })
    client.send({ type: 'execute', session_id: 'm-s2', prompt: 'hello too' })
    await Promise.all([client.event('completed', 'm-s1'), client.event('completed', 'm-s2')])
    // Both CLIs stay for the next turn until the idle reaper ends them.
    expect(await metric('service_sessions_active')).toBe(2)
    expect(await metric('service_sessions_total', { kind: 'new' })).toBe(2)
    await vi.waitFor(async () => expect(await metric('service_sessions_active')).toBe(0), { timeout: 10_000, interval: 100 })

    // The next turn resumes the stored conversation in a new CLI.
    client.send({ type: 'execute', session_id: 'm-s1', prompt: 'sleep: 30', request_id: 'again' })
    await client.next((msg) => msg.event === 'tool_use' && msg.request_id === 'again')
    expect(await metric('service_sessions_active')).toBe(1)
    expect(await metric('service_sessions_total', { kind: 'resumed' })).toBe(1)
    expect(await metric('service_sessions_total', { kind: 'new' })).toBe(2)

    // A stop ends the session's processes.
    client.send({ type: 'stop', session_id: 'm-s1', request_id: 'halt' })
    await client.next((msg) => msg.event === 'stopped' && msg.request_id === 'halt')
    await vi.waitFor(async () => expect(await metric('service_sessions_active')).toBe(0), { timeout: 10_000, interval: 100 })
  })

  it('sessions - errors count each failed turn by its code', async () => {
    const { client } = await start()
    client.send({ type: 'execute', session_id: 'm-e1', prompt: 'fail', request_id: 1 })
    expect(await client.next((msg) => msg.request_id === 1 && msg.event === 'error')).toMatchObject({ error: { code: 'ENGINE_ERROR' } })
    client.send({ type: 'execute', session_id: 'm-e2', prompt: 'crash', request_id: 2 })
    expect(await client.next((msg) => msg.request_id === 2 && msg.event === 'error')).toMatchObject({ error: { code: 'ENGINE_EXITED' } })
    client.send({ type: 'execute', session_id: 'm-e1', prompt: 'fail again', request_id: 3 })
    await client.next((msg) => msg.request_id === 3 && msg.event === 'error')
    // A completed turn is no error.
    client.send({ type: 'execute', session_id: 'm-e3', prompt: 'fine', request_id: 4 })
    await client.next((msg) => msg.request_id === 4 && msg.event === 'completed')

    expect(await metric('service_sessions_errors', { code: 'ENGINE_ERROR' })).toBe(2)
    expect(await metric('service_sessions_errors', { code: 'ENGINE_EXITED' })).toBe(1)
  })

  it('tools - each tool_use counts by tool name', async () => {
    const { client } = await start()
    expect(await metric('service_tools_invoked', { tool: 'Bash' })).toBe(0)
    client.send({ type: 'execute', session_id: 'm-t1', prompt: 'tool: echo one' })
    await client.event('completed', 'm-t1')
    client.send({ type: 'execute', session_id: 'm-t2', prompt: 'tool: echo two' })
    await client.event('completed', 'm-t2')
    client.send({ type: 'execute', session_id: 'm-t2', prompt: 'no tool here', request_id: 'plain' })
    await client.next((msg) => msg.event === 'completed' && msg.request_id === 'plain')
    expect(await metric('service_tools_invoked', { tool: 'Bash' })).toBe(2)
  })

  it('dangers - a WAF block counts by category, and as the session error it is', async () => {
    const { client } = await start()
    client.send({ type: 'execute', session_id: 'm-w1', prompt: 'Run `rm -rf /` now', request_id: 'rm' })
    const error = await client.next((msg) => msg.request_id === 'rm' && msg.event === 'error')
    expect(error).toMatchObject({ error: { code: 'WAF_BLOCKED' }, waf: { category: 'filesystem_destruction' } })
    // An ordinary prompt passes and counts nothing.
    client.send({ type: 'execute', session_id: 'm-w1', prompt: 'Fix `main.go`', request_id: 'ok' })
    await client.next((msg) => msg.request_id === 'ok' && msg.event === 'completed')
    expect(await metric('service_dangers_blocked', { category: 'filesystem_destruction' })).toBe(1)
    expect(await metric('service_sessions_errors', { code: 'WAF_BLOCKED' })).toBe(1)
  })

  it('requests - HTTP by route pattern, method and status; WebSocket requests by type', async () => {
    const { stack, client } = await start()
    const count = (labels: Record<string, string>) => metric('service_request_duration_seconds_count', labels)
    expect((await fetch(`${stack.url}/session`)).status).toBe(200)
    expect((await fetch(`${stack.url}/session`)).status).toBe(200)
    expect((await fetch(`${stack.url}/session/no-such-session`)).status).toBe(404)
    expect((await fetch(`${stack.url}/no/such/route/${Math.random()}`)).status).toBe(404)
    client.send({ type: 'version', request_id: 'v' })
    await client.next((msg) => msg.request_id === 'v')
    client.send({ type: 'stats', session_id: 'never-seen', request_id: 's' })
    await client.next((msg) => msg.request_id === 's')
    client.send({ type: 'no-such-type', request_id: 'bad' })
    await client.next((msg) => msg.request_id === 'bad')

    expect(await count({ method: 'GET', route: '/session', status: '200' })).toBe(2)
    // The pattern, never the raw path: ids and stray URLs cannot grow the label set.
    expect(await count({ method: 'GET', route: '/session/:id', status: '404' })).toBe(1)
    expect(await count({ method: 'GET', route: 'unmatched', status: '404' })).toBe(1)
    expect(await count({ method: 'WS', route: '/ws/v1/agent#version', status: '200' })).toBe(1)
    expect(await count({ method: 'WS', route: '/ws/v1/agent#stats', status: '404' })).toBe(1)
    expect(await count({ method: 'WS', route: '/ws/v1/agent#invalid', status: '400' })).toBe(1)
    const text = await scrape(stack.url)
    expect(text).not.toContain('no/such/route')
    expect(sample(text, 'service_request_duration_seconds_sum', { method: 'GET', route: '/session', status: '200' })).toBeGreaterThan(0)
  })

  it('process - the default process metrics are exposed with the six of §6.3', async () => {
    const { stack } = await start()
    const text = await scrape(stack.url)
    for (const name of [
      'service_sessions_active',
      'service_sessions_total',
      'service_sessions_errors',
      'service_tools_invoked',
      'service_dangers_blocked',
      'service_request_duration_seconds',
    ]) {
      expect(text).toContain(`# TYPE ${name} `)
    }
    expect(text).toContain('# TYPE service_sessions_active gauge')
    expect(text).toContain('# TYPE service_request_duration_seconds histogram')
    expect(sample(text, 'process_cpu_user_seconds_total')).toBeGreaterThan(0)
    expect(sample(text, 'nodejs_heap_size_used_bytes')).toBeGreaterThan(0)
  })
})
