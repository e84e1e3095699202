import { describe, expect, it } from 'vitest'
import { emptyStats } from '../../../contract/mod.ts'
import { markBusy, markIdle, newRecord, setQueue } from '../../../runner/ownership/record.ts'
import type { SessionRecord } from '../../../state/mod.ts'

const base = (fields: Partial<SessionRecord> = {}): SessionRecord => ({ ...newRecord('s1', 'cli-1', 5), owner: 'r0', ...fields })
const busy = base({ state: 'busy', turn_id: 't1', turn_request_id: 'a', queued: [{ turn_id: 't2' }], work_dir: '/w' })

describe('session record changes', () => {
  it('record - a new record is idle, has no owner yet and counts nothing', () => {
    expect(newRecord('s1', 'cli-1', 5)).toEqual({
      session_id: 's1',
      state: 'idle',
      cli_session_id: 'cli-1',
      created_at: 5,
      last_active: 5,
      stats: emptyStats(),
    })
  })

  it.each<[string, SessionRecord, Parameters<typeof markBusy> extends [SessionRecord, ...infer Rest] ? Rest : never, Partial<SessionRecord>]>([
    [
      'a turn with a request id and a work dir',
      base(),
      [{ turnId: 't1', requestId: 'a', workDir: '/w', engine: undefined }, []],
      { state: 'busy', turn_id: 't1', turn_request_id: 'a', work_dir: '/w' },
    ],
    [
      'a turn without a request id drops the last one',
      base({ turn_request_id: 'old' }),
      [{ turnId: 't2', requestId: undefined, workDir: undefined, engine: undefined }, []],
      { state: 'busy', turn_id: 't2' },
    ],
    [
      'an unknown work dir keeps the recorded one',
      base({ work_dir: '/w' }),
      [{ turnId: 't1', requestId: 7, workDir: undefined, engine: undefined }, [{ turn_id: 't2', request_id: 8 }]],
      { state: 'busy', turn_id: 't1', turn_request_id: 7, work_dir: '/w', queued: [{ turn_id: 't2', request_id: 8 }] },
    ],
    [
      'the engine the session runs is recorded',
      base(),
      [{ turnId: 't1', requestId: undefined, workDir: undefined, engine: 'gemini' }, []],
      { state: 'busy', turn_id: 't1', engine: 'gemini' },
    ],
  ])('record - busy: %s', (_name, record, args, expected) => {
    markBusy(record, ...args)
    expect(record).toEqual({ ...base(), ...expected })
  })

  it.each<[string, SessionRecord, Parameters<typeof markIdle> extends [SessionRecord, ...infer Rest] ? Rest : never, Partial<SessionRecord>]>([
    ['handed back, lost or stopped: no turn, nothing waiting', busy, [], { work_dir: '/w' }],
    [
      'a turn ended with one still waiting, with the new stats',
      busy,
      [[{ turn_id: 't3' }], { ...emptyStats(), turns: 1 }],
      { work_dir: '/w', queued: [{ turn_id: 't3' }], stats: { ...emptyStats(), turns: 1 } },
    ],
    ['already idle: unchanged', base(), [], {}],
  ])('record - idle: %s', (_name, record, args, expected) => {
    const next = structuredClone(record)
    markIdle(next, ...args)
    expect(next).toEqual({ ...base(), ...expected })
  })

  it.each([
    ['a waiting turn', [{ turn_id: 't2' }], [{ turn_id: 't2' }]],
    ['none: the field goes', [], undefined],
  ] as const)('record - queue: %s', (_name, queued, expected) => {
    const record = base({ queued: [{ turn_id: 'old' }] })
    setQueue(record, [...queued])
    expect(record.queued).toEqual(expected)
  })
})
