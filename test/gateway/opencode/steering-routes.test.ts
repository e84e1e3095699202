/**
 * The OpenCode steering routes on the layer (fastify inject) with a fake
 * Runners that checks every command against the contract, records it and
 * answers as a runner would; native events reach the layer on an in-process
 * bus, as a runner publishes them.
 */
import Fastify, { type FastifyInstance } from 'fastify'
import pino from 'pino'
import { afterEach, describe, expect, it } from 'vitest'
import { MemoryBus } from '../../../bus/mod.ts'
import { Command, Replies, ServiceError, subjects, type PendingRequests, type ReplyOf, type ServiceEvent } from '../../../contract/mod.ts'
import { DocumentSessionStore, registerOpencode, type OpencodeDeps } from '../../../gateway/opencode/mod.ts'
import { newSessionInfo } from '../../../gateway/opencode/session-info.ts'
import type { Runners } from '../../../gateway/runners.ts'
import { SessionHub } from '../../../gateway/session-hub.ts'
import { until } from '../../fixtures/until.ts'
import { nativeTurn } from './native-events.ts'

const log = pino({ level: 'silent' })
const PREFIX = 'test'

/** A runner as the layer sees it: every command parsed by the contract's schema, every answer by its reply schema. */
class FakeRunners implements Runners {
  readonly commands: Command[] = []
  /** What `pending` answers, by session; a session not here is SESSION_NOT_FOUND, as for a runner that holds none. */
  readonly pending = new Map<string, PendingRequests>()
  /** The next `reply` is refused with this. */
  refuse: ServiceError | undefined

  async send<C extends Command>(command: C): Promise<ReplyOf<C['type']>> {
    const parsed = Command.parse(command)
    this.commands.push(parsed)
    const answer = (() => {
      switch (parsed.type) {
        case 'reply': {
          const refusal = this.refuse
          this.refuse = undefined
          if (refusal) throw refusal
          return { resolved: true }
        }
        case 'pending': {
          const found = this.pending.get(parsed.session_id)
          if (!found) throw new ServiceError('SESSION_NOT_FOUND', `Session not found: ${parsed.session_id}`)
          return found
        }
        case 'version':
          return { version: '2.1.330 (Claude Code)', engine: 'claude' }
        case 'close':
          return { closed: true }
        default:
          throw new ServiceError('INTERNAL', `the fake runner takes no ${parsed.type}`)
      }
    })()
    return Replies[parsed.type].parse(answer) as ReplyOf<C['type']>
  }

  async recoverLost(): Promise<void> {}

  of<T extends Command['type']>(type: T): Extract<Command, { type: T }>[] {
    return this.commands.filter((command): command is Extract<Command, { type: T }> => command.type === type)
  }
}

const apps: FastifyInstance[] = []
afterEach(async () => {
  await Promise.all(apps.splice(0).map((app) => app.close()))
})

async function setup(options: Pick<OpencodeDeps, 'sessionStore' | 'sessionBusy'> = {}) {
  const bus = new MemoryBus()
  const runners = new FakeRunners()
  const app = Fastify()
  apps.push(app)
  await registerOpencode(app, {
    runners,
    hub: new SessionHub(bus, PREFIX, log),
    log,
    heartbeatMs: 0,
    auth: false,
    workBase: '/srv/sandboxes',
    tenant: (request) => (request.headers['x-tenant'] as string | undefined) ?? 'default',
    ...options,
  })
  await app.ready()
  const publish = (event: ServiceEvent) => bus.publish(subjects(PREFIX).events(event.session_id!), JSON.stringify(event))
  const call = async (method: 'GET' | 'POST', url: string, payload?: unknown, tenant?: string) => {
    const answer = await app.inject({
      method,
      url,
      ...(payload !== undefined && { payload: payload as object }),
      ...(tenant !== undefined && { headers: { 'x-tenant': tenant } }),
    })
    return { status: answer.statusCode, body: answer.body === '' ? undefined : answer.json() }
  }
  /** A session created here, whose turn runs a Bash call waiting for a person (per_<session>). */
  const asking = async (sessionId: string, tenant?: string) => {
    expect((await call('POST', '/session', { session_id: sessionId }, tenant)).status).toBe(200)
    const t = nativeTurn(sessionId, `turn_${sessionId}`)
    for (const event of [
      t.started('run: touch canary'),
      t.toolUse(`toolu_${sessionId}`, { command: 'touch canary' }),
      t.permission(`per_${sessionId}`, `toolu_${sessionId}`, 'touch canary'),
    ])
      publish(event)
    await until(
      async () => (await call('GET', '/permission', undefined, tenant)).body.some((p: { id: string }) => p.id === `per_${sessionId}`),
      'the request listed',
    )
    return t
  }
  return { app, runners, publish, call, asking }
}

describe('opencode steering routes - permission requests and questions over OpenCode’s routes', () => {
  it('lists - GET /permission and /question: the open requests of the tenant’s sessions in OpenCode’s shape; another tenant sees none', async () => {
    const { call, publish, asking } = await setup()
    expect((await call('GET', '/permission')).body).toEqual([])
    expect((await call('GET', '/question')).body).toEqual([])
    const t = await asking('ses_a')
    publish(t.question('que_a', 'Which colour?', ['Red', 'Blue']))
    await until(async () => (await call('GET', '/question')).body.length === 1, 'the question listed')
    const [permission] = (await call('GET', '/permission')).body
    expect(permission).toMatchObject({
      id: 'per_ses_a',
      sessionID: 'ses_a',
      permission: 'bash',
      patterns: ['touch canary'],
      always: ['touch canary *'],
      metadata: { command: 'touch canary', title: 'Bash: touch canary' },
      tool: { messageID: expect.stringMatching(/^msg_/), callID: 'toolu_ses_a' },
    })
    expect((await call('GET', '/question')).body).toEqual([
      {
        id: 'que_a',
        sessionID: 'ses_a',
        questions: [
          {
            question: 'Which colour?',
            header: 'Choice',
            options: [
              { label: 'Red', description: '' },
              { label: 'Blue', description: '' },
            ],
            multiple: false,
            custom: true,
          },
        ],
      },
    ])
    expect((await call('GET', '/permission', undefined, 'globex')).body).toEqual([])
    expect((await call('GET', '/question', undefined, 'globex')).body).toEqual([])
    publish(t.resolved('per_ses_a', 'allow_once'))
    await until(async () => (await call('GET', '/permission')).body.length === 0, 'the settled request gone')
  })

  it.each([
    [{ reply: 'once' }, { decision: 'allow_once' }],
    [{ reply: 'always' }, { decision: 'allow_always' }],
    [
      { reply: 'reject', message: 'not that file' },
      { decision: 'deny', message: 'not that file' },
    ],
    [{ reply: 'reject', message: '' }, { decision: 'deny' }],
  ])('reply - POST /permission/{requestID}/reply %j: a reply command to the session that asked, by opencode; true', async (body, expected) => {
    const { call, runners, asking } = await setup()
    await asking('ses_a')
    expect(await call('POST', '/permission/per_ses_a/reply', body)).toEqual({ status: 200, body: true })
    expect(runners.of('reply')).toEqual([{ type: 'reply', session_id: 'ses_a', reply: { kind: 'permission', id: 'per_ses_a', ...expected }, by: 'opencode' }])
    expect(runners.of('pending')).toEqual([])
  })

  it('respond - the older POST /session/{id}/permissions/{permissionID} {response} takes the session from the path', async () => {
    const { call, runners, asking } = await setup()
    await asking('ses_a')
    expect(await call('POST', '/session/ses_a/permissions/per_ses_a', { response: 'always' })).toEqual({ status: 200, body: true })
    expect(runners.of('reply')).toEqual([
      { type: 'reply', session_id: 'ses_a', reply: { kind: 'permission', id: 'per_ses_a', decision: 'allow_always' }, by: 'opencode' },
    ])
  })

  it('question - POST /question/{requestID}/reply {answers} and /reject: answer and reject commands; true', async () => {
    const { call, runners, publish, asking } = await setup()
    const t = await asking('ses_a')
    publish(t.question('que_1', 'A?', ['x', 'y']))
    publish(t.question('que_2', 'B?', ['z']))
    await until(async () => (await call('GET', '/question')).body.length === 2, 'both questions listed')
    expect(await call('POST', '/question/que_1/reply', { answers: [['y']] })).toEqual({ status: 200, body: true })
    expect(await call('POST', '/question/que_2/reject')).toEqual({ status: 200, body: true })
    expect(runners.of('reply').map((c) => c.reply)).toEqual([
      { kind: 'answer', id: 'que_1', answers: [['y']] },
      { kind: 'reject', id: 'que_2' },
    ])
  })

  it('v2 - the /api routes: a session’s lists under data, one request, replies 204; the location lists', async () => {
    const { call, runners, publish, asking } = await setup()
    const t = await asking('ses_a')
    publish(t.question('que_1', 'A?', ['x']))
    await until(async () => (await call('GET', '/question')).body.length === 1, 'the question listed')
    const permission = {
      id: 'per_ses_a',
      sessionID: 'ses_a',
      action: 'bash',
      resources: ['touch canary'],
      save: ['touch canary *'],
      source: { type: 'tool', callID: 'toolu_ses_a' },
    }
    expect((await call('GET', '/api/session/ses_a/permission')).body).toMatchObject({ data: [permission] })
    expect((await call('GET', '/api/session/ses_a/permission/per_ses_a')).body).toMatchObject({ data: permission })
    expect((await call('GET', '/api/permission/request')).body).toMatchObject({
      location: { directory: '/srv/sandboxes', project: { id: 'global', directory: '/srv/sandboxes' } },
      data: [permission],
    })
    expect((await call('GET', '/api/session/ses_a/question')).body).toMatchObject({ data: [{ id: 'que_1', questions: [{ question: 'A?' }] }] })
    expect((await call('GET', '/api/question/request')).body).toMatchObject({ location: { directory: '/srv/sandboxes' }, data: [{ id: 'que_1' }] })
    expect(await call('POST', '/api/session/ses_a/permission/per_ses_a/reply', { reply: 'once' })).toEqual({ status: 204, body: undefined })
    expect(await call('POST', '/api/session/ses_a/question/que_1/reply', { answers: [['x']] })).toEqual({ status: 204, body: undefined })
    expect(await call('POST', '/api/session/ses_a/question/que_1/reject')).toEqual({ status: 204, body: undefined })
    expect(runners.of('reply').map((c) => [c.session_id, c.reply.kind])).toEqual([
      ['ses_a', 'permission'],
      ['ses_a', 'answer'],
      ['ses_a', 'reject'],
    ])
  })

  it('errors - OpenCode’s tagged shapes: a request not waiting 404 (ALREADY_ANSWERED keeps its code), a bad answer 400, an unknown session 404', async () => {
    const { call, runners, asking } = await setup()
    await asking('ses_a')
    runners.refuse = new ServiceError('PERMISSION_NOT_FOUND', 'no permission request or question per_ses_a waits in this session')
    expect(await call('POST', '/permission/per_ses_a/reply', { reply: 'once' })).toEqual({
      status: 404,
      body: { _tag: 'PermissionNotFoundError', requestID: 'per_ses_a', message: 'Permission request not found: per_ses_a' },
    })
    runners.refuse = new ServiceError('ALREADY_ANSWERED', 'request per_ses_a was settled already (another client answered it)')
    expect(await call('POST', '/permission/per_ses_a/reply', { reply: 'once' })).toEqual({
      status: 404,
      body: {
        _tag: 'PermissionNotFoundError',
        requestID: 'per_ses_a',
        message: 'request per_ses_a was settled already (another client answered it)',
        code: 'ALREADY_ANSWERED',
      },
    })
    runners.refuse = new ServiceError('ALREADY_ANSWERED', 'settled')
    expect((await call('POST', '/api/session/ses_a/question/que_x/reject')).body).toEqual({
      _tag: 'QuestionNotFoundError',
      requestID: 'que_x',
      message: 'settled',
      code: 'ALREADY_ANSWERED',
    })
    runners.refuse = new ServiceError('BAD_REQUEST', 'answers has 2 lists; the question has 1')
    expect(await call('POST', '/api/session/ses_a/question/que_x/reply', { answers: [['a'], ['b']] })).toEqual({
      status: 400,
      body: { _tag: 'InvalidRequestError', message: 'answers has 2 lists; the question has 1', code: 'BAD_REQUEST' },
    })
    runners.refuse = new ServiceError('RUNNER_UNAVAILABLE', 'no runner')
    expect(await call('POST', '/permission/per_ses_a/reply', { reply: 'once' })).toEqual({
      status: 503,
      body: { name: 'UnknownError', data: { message: 'no runner', code: 'RUNNER_UNAVAILABLE' } },
    })
    const sent = runners.of('reply').length

    // Refused before any command: a body OpenCode would refuse, an unknown session.
    for (const [url, body] of [
      ['/permission/per_ses_a/reply', { reply: 'maybe' }],
      ['/permission/per_ses_a/reply', {}],
      ['/question/que_1/reply', { answers: [[]] }],
      ['/question/que_1/reply', { answers: 'x' }],
    ] as const) {
      const answer = await call('POST', url, body)
      expect(answer.status, JSON.stringify(body)).toBe(400)
      expect(answer.body, JSON.stringify(body)).toMatchObject({
        _tag: 'InvalidRequestError',
        message: expect.stringMatching(/^field "(reply|answers|answers\.0)/),
        code: 'BAD_REQUEST',
      })
    }
    expect(await call('GET', '/api/session/ses_nobody/permission')).toEqual({
      status: 404,
      body: { _tag: 'SessionNotFoundError', sessionID: 'ses_nobody', message: 'Session not found: ses_nobody' },
    })
    expect(await call('POST', '/api/session/ses_nobody/permission/per_ses_a/reply', { reply: 'once' })).toMatchObject({
      status: 404,
      body: { _tag: 'SessionNotFoundError' },
    })
    expect(await call('POST', '/session/ses_nobody/permissions/per_ses_a', { response: 'once' })).toEqual({
      status: 404,
      body: { name: 'NotFoundError', data: { message: 'Session not found: ses_nobody' } },
    })
    expect(await call('GET', '/api/session/ses_a/permission/per_other')).toEqual({
      status: 404,
      body: { _tag: 'PermissionNotFoundError', requestID: 'per_other', message: 'Permission request not found: per_other' },
    })
    expect(runners.of('reply').length).toBe(sent)
  })

  it('tenants - another tenant answering by request id is told the request is not found, and nothing reaches the runner', async () => {
    const { call, runners, asking } = await setup()
    await asking('ses_a')
    expect(await call('POST', '/permission/per_ses_a/reply', { reply: 'once' }, 'globex')).toEqual({
      status: 404,
      body: { _tag: 'PermissionNotFoundError', requestID: 'per_ses_a', message: 'Permission request not found: per_ses_a' },
    })
    expect(await call('POST', '/api/session/ses_a/permission/per_ses_a/reply', { reply: 'once' }, 'globex')).toMatchObject({
      status: 404,
      body: { _tag: 'SessionNotFoundError' },
    })
    expect(runners.of('reply')).toEqual([])
  })

  it('index - a request id not seen here: sessions followed here and idle are not asked; not found anywhere is 404', async () => {
    const { call, runners, publish } = await setup()
    await call('POST', '/session', { session_id: 'ses_idle' })
    const t = nativeTurn('ses_idle', 'turn_1')
    for (const event of [t.started('p'), t.completed()]) publish(event)
    await until(async () => (await call('GET', '/session/status')).body.ses_idle?.type === 'idle', 'the turn over')
    expect((await call('POST', '/permission/per_unknown/reply', { reply: 'once' })).status).toBe(404)
    expect((await call('POST', '/question/que_unknown/reject')).body).toEqual({
      _tag: 'QuestionNotFoundError',
      requestID: 'que_unknown',
      message: 'Question request not found: que_unknown',
    })
    expect(runners.of('pending')).toEqual([])
    expect(runners.of('reply')).toEqual([])
  })

  it('index - a miss asks the runners: a session running a turn, and one this gateway does not follow (another gateway’s); what they answer is remembered', async () => {
    const sessionStore = new DocumentSessionStore()
    // Created through another gateway sharing the store: never followed here.
    await sessionStore.insert({
      info: newSessionInfo({ id: 'ses_elsewhere', directory: '/srv/sandboxes/ses_elsewhere', now: 1, version: '0.1.0' }),
      tenant: 'default',
    })
    await sessionStore.insert({
      info: newSessionInfo({ id: 'ses_theirs', directory: '/srv/sandboxes/ses_theirs', now: 1, version: '0.1.0' }),
      tenant: 'globex',
    })
    const { call, runners, publish } = await setup({ sessionStore })
    // Followed here, running a turn whose request event has not arrived yet.
    await call('POST', '/session', { session_id: 'ses_busy' })
    publish(nativeTurn('ses_busy', 'turn_1').started('p'))
    await until(async () => (await call('GET', '/session/status')).body.ses_busy?.type === 'busy', 'the turn running')
    const request = { tool: { name: 'Bash', input: {} }, title: 'Bash', options: ['allow_once' as const], expires_at: 9 }
    runners.pending.set('ses_busy', { permissions: [{ id: 'per_busy', ...request }], questions: [] })
    runners.pending.set('ses_elsewhere', {
      permissions: [{ id: 'per_far', ...request }],
      questions: [{ id: 'que_far', questions: [{ question: 'Q?', options: [], multi_select: false }], expires_at: 9 }],
    })

    expect(await call('POST', '/permission/per_far/reply', { reply: 'once' })).toEqual({ status: 200, body: true })
    expect(
      runners
        .of('pending')
        .map((c) => c.session_id)
        .sort(),
    ).toEqual(['ses_busy', 'ses_elsewhere'])
    expect(runners.of('reply').at(-1)).toMatchObject({ session_id: 'ses_elsewhere', reply: { id: 'per_far' } })
    // Learned from the same answers: no more asking.
    expect(await call('POST', '/question/que_far/reject')).toEqual({ status: 200, body: true })
    expect(await call('POST', '/permission/per_busy/reply', { reply: 'reject' })).toEqual({ status: 200, body: true })
    expect(runners.of('pending')).toHaveLength(2)
    expect(runners.of('reply').map((c) => [c.session_id, c.reply.id])).toEqual([
      ['ses_elsewhere', 'per_far'],
      ['ses_elsewhere', 'que_far'],
      ['ses_busy', 'per_busy'],
    ])
  })

  it('index - with the registry’s word on which sessions run a turn, an idle session this gateway does not follow is not asked', async () => {
    const sessionStore = new DocumentSessionStore()
    for (const id of ['ses_running', 'ses_resting']) {
      await sessionStore.insert({ info: newSessionInfo({ id, directory: `/srv/sandboxes/${id}`, now: 1, version: '0.1.0' }), tenant: 'default' })
    }
    const asked: string[] = []
    const { call, runners } = await setup({
      sessionStore,
      sessionBusy: async (id) => {
        asked.push(id)
        return id === 'ses_running'
      },
    })
    runners.pending.set('ses_running', {
      permissions: [],
      questions: [{ id: 'que_run', questions: [{ question: 'Q?', options: [], multi_select: false }], expires_at: 9 }],
    })
    expect(await call('POST', '/question/que_run/reply', { answers: [['typed']] })).toEqual({ status: 200, body: true })
    expect(asked.sort()).toEqual(['ses_resting', 'ses_running'])
    expect(runners.of('pending').map((c) => c.session_id)).toEqual(['ses_running'])
    expect(runners.of('reply')).toMatchObject([{ session_id: 'ses_running', reply: { kind: 'answer', id: 'que_run', answers: [['typed']] } }])
  })
})
