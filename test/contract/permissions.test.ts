/** The permission table (contract/permissions.ts): who may publish and subscribe to what, case by case. */
import { describe, expect, it } from 'vitest'
import { subjectMatches } from '../../bus/mod.ts'
import { inboxPrefixFor, permissionsFor, type NatsPermissions, type PermissionSpec } from '../../contract/permissions.ts'
import { sessionKey } from '../../state/keys.ts'

const P = 'ar'
const A = 'sess-a'
const B = 'sess b.*'
const specs: Record<string, PermissionSpec> = {
  gateway: { role: 'gateway', prefix: P },
  controller: { role: 'controller', prefix: P },
  runner: { role: 'runner', prefix: P },
  'session-runner': { role: 'session-runner', prefix: P, sessionId: A, runnerId: 'pod-a' },
}

/** NATS's rule: allowed by some allow entry and by no deny entry. */
function allows(list: NatsPermissions['publish'], subject: string): boolean {
  return list.allow.some((p) => subjectMatches(p, subject)) && !list.deny.some((p) => subjectMatches(p, subject))
}

const tokenB = '~' + Buffer.from(B).toString('base64url')
const keyB = sessionKey(B)

// [role, pub|sub, subject, allowed]
const cases: Array<[string, 'pub' | 'sub', string, boolean]> = [
  // Gateways send commands, follow events, read and write state; they take no commands.
  ['gateway', 'pub', 'ar.runner.pod-a', true],
  ['gateway', 'pub', 'ar.place', true],
  ['gateway', 'pub', 'ar.ctl', true],
  ['gateway', 'pub', 'ar.controller.demand', true],
  ['gateway', 'pub', `ar.evt.${A}`, false],
  ['gateway', 'sub', `ar.evt.${A}`, true],
  // Live-only events (token deltas) have their own subjects, outside the event stream.
  ['gateway', 'sub', `ar.live.${A}`, true],
  ['gateway', 'pub', `ar.live.${A}`, false],
  ['gateway', 'sub', 'ar.runner.pod-a', false],
  ['gateway', 'sub', 'ar.place', false],
  ['gateway', 'sub', '_INBOX_ar.gateway.x.1', true],
  ['gateway', 'sub', '_INBOX_ar.runner.x.1', false],
  ['gateway', 'pub', '$JS.API.STREAM.MSG.GET.ar_events', true],
  ['gateway', 'pub', '$JS.API.CONSUMER.CREATE.ar_events.c1.ar.evt.s', true],
  ['gateway', 'pub', '$JS.API.CONSUMER.MSG.NEXT.ar_events.c1', true],
  ['gateway', 'pub', '$JS.API.STREAM.PURGE.ar_events', false],
  ['gateway', 'pub', '$JS.API.STREAM.DELETE.KV_ar_sessions', false],
  ['gateway', 'pub', '$JS.API.STREAM.MSG.DELETE.ar_events', false],
  ['gateway', 'pub', '$JS.API.STREAM.INFO.other_events', false],
  ['gateway', 'pub', '$KV.ar_opencode.x', true],
  ['gateway', 'pub', '$KV.ar_tenants.x', true],
  ['gateway', 'pub', '$JS.API.STREAM.CREATE.KV_ar_tenants', true],
  ['session-runner', 'pub', '$KV.ar_tenants.x', false],
  // The controller serves demand and writes session errors; it sends no commands.
  ['controller', 'sub', 'ar.controller.demand', true],
  ['controller', 'pub', `ar.evt.${A}`, true],
  ['controller', 'pub', 'ar.runner.pod-a', false],
  ['controller', 'pub', 'ar.place', false],
  ['controller', 'sub', `ar.evt.${A}`, false],
  ['controller', 'pub', `ar.live.${A}`, false],
  ['controller', 'sub', '_INBOX_ar.controller.1', true],
  // A shared runner takes any session (placement), but asks for no pods and reads no one's replies.
  ['runner', 'sub', 'ar.place', true],
  ['runner', 'sub', 'ar.runner.pod-z', true],
  ['runner', 'pub', `ar.evt.${tokenB}`, true],
  ['runner', 'pub', `ar.live.${tokenB}`, true],
  ['runner', 'sub', `ar.live.${tokenB}`, false],
  ['runner', 'pub', 'ar.controller.demand', false],
  ['runner', 'pub', 'ar.place', false],
  ['runner', 'sub', '_INBOX_ar.gateway.1', false],
  ['runner', 'pub', '$KV.ar_opencode.x', false],
  // A session runner: its own session, pod, key and lease, nothing else.
  ['session-runner', 'pub', `ar.evt.${A}`, true],
  ['session-runner', 'pub', `ar.evt.${tokenB}`, false],
  ['session-runner', 'pub', `ar.live.${A}`, true],
  ['session-runner', 'pub', `ar.live.${tokenB}`, false],
  ['session-runner', 'sub', 'ar.runner.pod-a', true],
  ['session-runner', 'sub', 'ar.runner.pod-b', false],
  ['session-runner', 'sub', 'ar.place', false],
  ['session-runner', 'sub', 'ar.ctl', true],
  ['session-runner', 'pub', 'ar.runner.pod-b', false],
  ['session-runner', 'pub', 'ar.controller.demand', false],
  ['session-runner', 'sub', `ar.evt.${A}`, false],
  ['session-runner', 'pub', `$KV.ar_sessions.${sessionKey(A)}`, true],
  ['session-runner', 'pub', `$KV.ar_sessions.${keyB}`, false],
  ['session-runner', 'pub', '$KV.ar_runners.pod-a', true],
  ['session-runner', 'pub', '$KV.ar_runners.pod-b', false],
  ['session-runner', 'pub', `$JS.API.DIRECT.GET.KV_ar_sessions.$KV.ar_sessions.${sessionKey(A)}`, true],
  ['session-runner', 'pub', `$JS.API.DIRECT.GET.KV_ar_sessions.$KV.ar_sessions.${keyB}`, false],
  ['session-runner', 'pub', '$JS.API.DIRECT.GET.KV_ar_sessions', false],
  ['session-runner', 'pub', '$JS.API.STREAM.MSG.GET.ar_events', false],
  ['session-runner', 'pub', '$JS.API.CONSUMER.CREATE.ar_events', false],
  ['session-runner', 'pub', '$JS.API.STREAM.UPDATE.ar_events', false],
  ['session-runner', 'pub', '$JS.API.STREAM.INFO.ar_events', true],
  ['session-runner', 'sub', '_INBOX_ar.pod.pod-a.x', true],
  ['session-runner', 'sub', '_INBOX_ar.pod.pod-b.x', false],
  ['session-runner', 'sub', '_INBOX_ar.gateway.x', false],
  ['session-runner', 'sub', '>', false],
]

describe('permissionsFor', () => {
  it.each(cases)('permissions - %s %s %s → %s', (role, op, subject, allowed) => {
    const p = permissionsFor(specs[role]!)
    expect(allows(op === 'pub' ? p.publish : p.subscribe, subject)).toBe(allowed)
  })

  it('permissions - only roles that serve requests may answer them', () => {
    expect(Object.fromEntries(Object.entries(specs).map(([role, spec]) => [role, permissionsFor(spec).allowResponses]))).toEqual({
      gateway: false,
      controller: true,
      runner: true,
      'session-runner': true,
    })
  })

  it('permissions - inbox prefixes differ per role and per pod, and each role subscribes to its own', () => {
    const prefixes = Object.values(specs).map(inboxPrefixFor)
    expect(new Set(prefixes).size).toBe(prefixes.length)
    expect(inboxPrefixFor({ role: 'session-runner', prefix: P, sessionId: B, runnerId: 'pod-b' })).not.toBe(inboxPrefixFor(specs['session-runner']!))
    for (const spec of Object.values(specs)) expect(allows(permissionsFor(spec).subscribe, `${inboxPrefixFor(spec)}.abc.1`)).toBe(true)
  })

  it('permissions - a session id that is not a safe token is encoded as the state layer encodes it', () => {
    const p = permissionsFor({ role: 'session-runner', prefix: P, sessionId: B, runnerId: 'pod-b' })
    expect(allows(p.publish, `ar.evt.${tokenB}`)).toBe(true)
    expect(allows(p.publish, `$KV.ar_sessions.${keyB}`)).toBe(true)
    // No wildcard from the id leaks into a permission.
    expect([...p.publish.allow, ...p.subscribe.allow].filter((entry) => entry.includes(B))).toEqual([])
  })

  it('permissions - a dotted prefix names streams with underscores, as the state layer does', () => {
    const p = permissionsFor({ role: 'gateway', prefix: 'a.b' })
    expect(allows(p.publish, '$JS.API.STREAM.INFO.a_b_events')).toBe(true)
    expect(allows(p.publish, '$KV.a_b_sessions.k')).toBe(true)
  })
})
