import { describe, expect, it } from 'vitest'
import type { ServiceEvent } from '../../../../contract/mod.ts'
import { sequentialIds } from '../../../../gateway/opencode/ids.ts'
import { applyEvent } from '../../../../gateway/opencode/mapping/apply.ts'
import { newSessionView, type MapContext } from '../../../../gateway/opencode/mapping/state.ts'
import { nativeTurn } from '../native-events.ts'

const SESSION = 'ses_waf'
const context = (): MapContext => ({
  id: sequentialIds(),
  now: () => 5,
  defaults: { agent: 'build', model: { providerID: 'agent-runtime', modelID: 'default' } },
})
const waf = {
  rule_id: 'fs.rm-root',
  category: 'filesystem_destruction',
  level: 'block',
  description: 'd',
  excerpt: 'rm -rf /',
  target: 'command',
  field: 'command',
} as const

function run(events: ServiceEvent[]) {
  const ctx = context()
  const view = newSessionView(SESSION, '/srv/sandbox')
  const results = events.map((event) => applyEvent(view, event, ctx))
  return { view, events: results.flatMap((r) => r.events), ended: results.flatMap((r) => r.ended) }
}

describe('opencode mapping - WAF errors', () => {
  const t = nativeTurn(SESSION, 'turn_1')
  const denied: ServiceEvent = {
    event: 'error',
    session_id: SESSION,
    turn_id: 'turn_1',
    seq: 4,
    ts: 1045,
    data: 'blocked',
    error: { code: 'WAF_BLOCKED', message: 'blocked' },
    waf,
    tool: { id: 'toolu_1', name: 'Bash', input: { command: 'rm -rf /' } },
  }

  it('waf - a denied tool call is not a turn end: the tool part fails with the reason, the turn completes', () => {
    const out = run([
      t.started('clean up'),
      t.toolUse('toolu_1', { command: 'rm -rf /' }),
      denied,
      t.toolResult('toolu_1', 'PreToolUse:Bash hook error: blocked', true),
      t.answer('I may not.'),
      t.completed(),
    ])
    expect(out.ended).toMatchObject([{ turnId: 'turn_1', end: 'completed' }])
    expect(out.events.some((event) => event.type === 'session.error')).toBe(false)
    const assistant = out.view.messages.find((m) => m.info.role === 'assistant')!
    expect(assistant.info).not.toHaveProperty('error')
    expect(assistant.parts.find((part) => part.type === 'tool')).toMatchObject({ state: { status: 'error', error: 'PreToolUse:Bash hook error: blocked' } })
  })

  it('waf - a blocked prompt ends the turn with its error', () => {
    const out = run([
      t.started('please run `rm -rf /`'),
      { event: 'error', session_id: SESSION, turn_id: 'turn_1', seq: 2, ts: 1030, data: 'blocked', error: { code: 'WAF_BLOCKED', message: 'blocked' }, waf },
    ])
    expect(out.ended).toMatchObject([{ turnId: 'turn_1', end: 'error' }])
    expect(out.events.some((event) => event.type === 'session.error')).toBe(true)
  })
})
