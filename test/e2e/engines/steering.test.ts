import { existsSync } from 'node:fs'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startStack, type Stack } from '../../fixtures/stack.ts'
import { TENANT_KEYS, TENANTS } from '../../fixtures/tenants.ts'
import { WsClient } from '../../fixtures/ws-client.ts'
import { ENGINE_ROWS } from './rows.ts'
import type { EngineFixture } from './row.ts'

/**
 * Steering conformance: with `approval: ask`, every engine that can ask puts
 * its tool calls and questions to the session's clients, and the person's
 * answer reaches the CLI. Real CLIs against the fake model APIs, dev mode,
 * the bubblewrap sandbox and the WAF on, as users run it.
 */

type Msg = Record<string, unknown>
const TURN_MS = 90_000
const isEnd = (msg: Msg) => msg.event === 'completed' || msg.event === 'stopped' || (msg.event === 'error' && msg.tool === undefined)
const permissionOf = (msg: Msg) =>
  msg.permission as { id: string; tool: { name: string; input: Record<string, unknown> }; options: string[]; always?: string; expires_at: number }
const questionOf = (msg: Msg) => msg.question as { id: string; questions: { question: string; options: { label: string }[] }[] }

describe.each(ENGINE_ROWS.filter((row) => row.steering !== undefined))('steering - $name', (row) => {
  let fixture: EngineFixture
  let stack: Stack
  let acme: WsClient
  let acme2: WsClient
  let globex: WsClient

  beforeAll(async () => {
    fixture = await row.setup()
    stack = await startStack({
      ...TENANTS,
      engine: { default: row.name, stop_grace: '2s', approval: 'ask', approval_timeout: '3s' },
      engines: [fixture.config],
    })
    ;[acme, acme2, globex] = await Promise.all([
      WsClient.connect(stack.wsUrl, { 'x-api-key': TENANT_KEYS.acme }),
      WsClient.connect(stack.wsUrl, { 'x-api-key': TENANT_KEYS.acme2 }),
      WsClient.connect(stack.wsUrl, { 'x-api-key': TENANT_KEYS.globex }),
    ])
  }, 120_000)
  afterAll(async () => {
    await Promise.all([acme?.close(), acme2?.close(), globex?.close()])
    await stack?.close()
    await fixture?.stop()
  })

  const canaryOf = (sessionId: string, name = 'canary') => path.join(stack.config.session.work_dir, sessionId, name)
  /** Starts a turn that runs `touch <canary>` and waits for its permission request. */
  async function asked(client: WsClient, sessionId: string, requestId: string, name = 'canary') {
    client.send({ type: 'execute', request_id: requestId, session_id: sessionId, prompt: `run: touch ${name}` })
    const request = await client.next(
      (msg) => msg.session_id === sessionId && msg.event === 'permission_request' && !answered.has(permissionOf(msg).id),
      TURN_MS,
    )
    return permissionOf(request)
  }
  const answered = new Set<string>()
  // The question scenarios exist only for engines whose agent can ask (the row says which and why), so none is left skipped.
  const itWithQuestions: typeof it = row.steering?.questions ? it : ((() => {}) as unknown as typeof it)
  const end = (client: WsClient, requestId: string) => client.next((msg) => msg.request_id === requestId && isEnd(msg), TURN_MS)

  it(`${row.name} - allow once: the tool runs, every client of the tenant is told who settled it`, async () => {
    const permission = await asked(acme, `${row.name}-once`, 'once')
    expect(permission).toMatchObject({ tool: { name: 'Bash' }, options: ['allow_once', 'allow_always', 'deny'] })
    expect(JSON.stringify(permission.tool.input)).toContain('touch canary')
    expect(permission.expires_at).toBeGreaterThan(Date.now())
    acme.send({ type: 'permission_reply', session_id: `${row.name}-once`, permission_id: permission.id, decision: 'allow_once' })
    answered.add(permission.id)
    expect(await acme.next((msg) => msg.event === 'permission_resolved' && msg.permission_id === permission.id)).toMatchObject({
      decision: 'allow_once',
      source: 'client',
      by: 'websocket',
    })
    expect(await end(acme, 'once')).toMatchObject({ event: 'completed' })
    expect(existsSync(canaryOf(`${row.name}-once`))).toBe(true)
  })

  it(`${row.name} - deny: the tool never runs and the agent reads the person's message`, async () => {
    const sessionId = `${row.name}-deny`
    const permission = await asked(acme, sessionId, 'deny')
    acme.send({ type: 'permission_reply', session_id: sessionId, permission_id: permission.id, decision: 'deny', message: 'not that file' })
    answered.add(permission.id)
    expect(await end(acme, 'deny')).toMatchObject({ event: 'completed' })
    expect(existsSync(canaryOf(sessionId))).toBe(false)
    if (row.steering!.denyMessage) expect(fixture.modelSaw('not that file')).toBe(true)
  })

  it(`${row.name} - allow always: the same call is not asked again in the session`, async () => {
    const sessionId = `${row.name}-always`
    const permission = await asked(acme, sessionId, 'always-1')
    acme.send({ type: 'permission_reply', session_id: sessionId, permission_id: permission.id, decision: 'allow_always' })
    answered.add(permission.id)
    await end(acme, 'always-1')
    acme.send({ type: 'execute', request_id: 'always-2', session_id: sessionId, prompt: 'run: touch canary' })
    expect(await end(acme, 'always-2')).toMatchObject({ event: 'completed' })
    const second = acme.eventsOf(sessionId).filter((msg) => msg.request_id === 'always-2')
    expect(second.map((msg) => msg.event)).not.toContain('permission_request')
    expect(second.find((msg) => msg.event === 'permission_resolved')).toMatchObject({ source: 'rule', rule: permission.always })
  })

  it(`${row.name} - nobody answers: denied at the timeout, the turn goes on`, async () => {
    const sessionId = `${row.name}-timeout`
    const permission = await asked(acme, sessionId, 'timeout')
    answered.add(permission.id)
    expect(await acme.next((msg) => msg.event === 'permission_resolved' && msg.permission_id === permission.id, 15_000)).toMatchObject({
      decision: 'deny',
      source: 'timeout',
    })
    expect(await end(acme, 'timeout')).toMatchObject({ event: 'completed' })
    expect(existsSync(canaryOf(sessionId))).toBe(false)
    acme.send({ type: 'permission_reply', request_id: 'late', session_id: sessionId, permission_id: permission.id, decision: 'allow_once' })
    expect(await acme.next((msg) => msg.request_id === 'late' && msg.event === 'error')).toMatchObject({ error: { code: 'ALREADY_ANSWERED' } })
  })

  it(`${row.name} - a client that attaches mid-wait sees the request and answers it; racing clients: exactly one answer counts`, async () => {
    const sessionId = `${row.name}-race`
    const permission = await asked(acme, sessionId, 'race')
    answered.add(permission.id)
    // A second client of the tenant attaches late: the stored request is replayed to it.
    acme2.send({ type: 'attach', session_id: sessionId, last_seq: 0 })
    const replayed = await acme2.next((msg) => msg.session_id === sessionId && msg.event === 'permission_request')
    expect(permissionOf(replayed).id).toBe(permission.id)
    acme.send({ type: 'permission_reply', request_id: 'r1', session_id: sessionId, permission_id: permission.id, decision: 'allow_once' })
    acme2.send({ type: 'permission_reply', request_id: 'r2', session_id: sessionId, permission_id: permission.id, decision: 'deny' })
    const resolved = await acme2.next((msg) => msg.event === 'permission_resolved' && msg.permission_id === permission.id)
    await end(acme, 'race')
    const refusals = [...acme.messages, ...acme2.messages].filter((msg) => (msg.request_id === 'r1' || msg.request_id === 'r2') && msg.event === 'error')
    expect(refusals.map((msg) => (msg.error as { code: string }).code)).toEqual(['ALREADY_ANSWERED'])
    expect(existsSync(canaryOf(sessionId))).toBe(resolved.decision === 'allow_once')
    expect(
      [...acme.eventsOf(sessionId), ...acme2.eventsOf(sessionId)].filter((msg) => msg.event === 'permission_resolved' && msg.permission_id === permission.id)
        .length,
    ).toBe(2)
  })

  it(`${row.name} - another tenant cannot answer, and is told exactly what an unknown session tells`, async () => {
    const sessionId = `${row.name}-tenant`
    const permission = await asked(acme, sessionId, 'tenant')
    answered.add(permission.id)
    globex.send({ type: 'permission_reply', request_id: 'other', session_id: sessionId, permission_id: permission.id, decision: 'allow_once' })
    globex.send({ type: 'permission_reply', request_id: 'unknown', session_id: `${row.name}-nobody`, permission_id: permission.id, decision: 'allow_once' })
    const [other, unknown] = await Promise.all([globex.next((msg) => msg.request_id === 'other'), globex.next((msg) => msg.request_id === 'unknown')])
    expect(other).toMatchObject({ event: 'error', error: { code: 'SESSION_NOT_FOUND' } })
    expect((other.error as { message: string }).message).toBe((unknown.error as { message: string }).message.replace(`${row.name}-nobody`, sessionId))
    // Still waiting for acme: answered now.
    acme.send({ type: 'permission_reply', session_id: sessionId, permission_id: permission.id, decision: 'deny' })
    await end(acme, 'tenant')
    expect(existsSync(canaryOf(sessionId))).toBe(false)
  })

  it(`${row.name} - bad replies get a clear error with the frame's request_id`, async () => {
    const sessionId = `${row.name}-bad`
    const permission = await asked(acme, sessionId, 'bad')
    answered.add(permission.id)
    acme.send({ type: 'permission_reply', request_id: 'b1', session_id: sessionId, permission_id: 'per_unknown', decision: 'allow_once' })
    acme.send({ type: 'permission_reply', request_id: 'b2', session_id: sessionId, permission_id: permission.id, decision: 'maybe' })
    acme.send({ type: 'answer', request_id: 'b3', session_id: sessionId, question_id: permission.id, answers: [['x']] })
    const codes = await Promise.all(
      ['b1', 'b2', 'b3'].map((id) => acme.next((msg) => msg.request_id === id && msg.event === 'error').then((msg) => (msg.error as { code: string }).code)),
    )
    expect(codes).toEqual(['PERMISSION_NOT_FOUND', 'BAD_REQUEST', 'BAD_REQUEST'])
    acme.send({ type: 'permission_reply', session_id: sessionId, permission_id: permission.id, decision: 'deny' })
    await end(acme, 'bad')
  })

  itWithQuestions(`${row.name} - a question answered: the model receives the answer`, async () => {
    const sessionId = `${row.name}-question`
    acme.send({ type: 'execute', request_id: 'q', session_id: sessionId, prompt: 'ask: Which colour? | Red | Blue' })
    const question = questionOf(await acme.event('question', sessionId, TURN_MS))
    expect(question.questions).toEqual([
      expect.objectContaining({ question: 'Which colour?', options: [expect.objectContaining({ label: 'Red' }), expect.objectContaining({ label: 'Blue' })] }),
    ])
    acme.send({ type: 'answer', session_id: sessionId, question_id: question.id, answers: [['Blue']] })
    expect(await acme.next((msg) => msg.event === 'question_resolved' && msg.question_id === question.id)).toMatchObject({
      answers: [['Blue']],
      source: 'client',
    })
    expect(await end(acme, 'q')).toMatchObject({ event: 'completed' })
    // The tool result the CLI sends the model reads `"Which colour?"="Blue"` (JSON-escaped in the request body).
    expect(fixture.modelSaw('=\\"Blue\\"')).toBe(true)
  })

  itWithQuestions(`${row.name} - a question rejected: the agent is told the person declined`, async () => {
    const sessionId = `${row.name}-reject`
    acme.send({ type: 'execute', request_id: 'qr', session_id: sessionId, prompt: 'ask: Which size? | S | L' })
    const question = questionOf(await acme.event('question', sessionId, TURN_MS))
    acme.send({ type: 'reject', session_id: sessionId, question_id: question.id, message: 'ask me later' })
    expect(await acme.next((msg) => msg.event === 'question_resolved' && msg.question_id === question.id)).toMatchObject({ source: 'client', data: 'rejected' })
    expect(await end(acme, 'qr')).toMatchObject({ event: 'completed' })
    expect(fixture.modelSaw('ask me later')).toBe(true)
  })

  it(`${row.name} - the settled requests are counted by decision and source, with the time they waited`, async () => {
    const text = await (await fetch(`${stack.url}/metrics`, { headers: { 'x-api-key': TENANT_KEYS.acme } })).text()
    const sample = (line: string) => Number(new RegExp(`^${line.replace(/[{}]/g, '\\$&')} (\\S+)$`, 'm').exec(text)?.[1] ?? 'NaN')
    expect(sample('service_approvals_total{kind="permission",decision="allow_once",source="client"}')).toBeGreaterThanOrEqual(1)
    expect(sample('service_approvals_total{kind="permission",decision="deny",source="timeout"}')).toBeGreaterThanOrEqual(1)
    expect(sample('service_approvals_total{kind="permission",decision="allow_once",source="rule"}')).toBeGreaterThanOrEqual(1)
    expect(sample('service_approval_wait_seconds_count{kind="permission",source="timeout"}')).toBeGreaterThanOrEqual(1)
  })
})
