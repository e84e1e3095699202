import { describe, expect, test } from 'vitest'
import { actionKey, type ActionKey, type KeyedAction } from '../../../controller/actions/key.ts'

const rows: { action: KeyedAction; key: ActionKey }[] = [
  { action: { kind: 'fail', sessionId: 's1', pod: 'p1', code: 'SANDBOX_LOST', message: 'gone' }, key: 'fail:s1:p1' },
  { action: { kind: 'fail', sessionId: 's1', pod: 'p1', code: 'SANDBOX_NOT_READY', message: 'another message' }, key: 'fail:s1:p1' },
  { action: { kind: 'release', sessionId: 's1', pod: 'p1' }, key: 'release:s1:p1' },
  { action: { kind: 'release', sessionId: 's1', pod: 'p2' }, key: 'release:s1:p2' },
  { action: { kind: 'release', sessionId: 'chat room #1', pod: 'p1' }, key: 'release:chat room #1:p1' },
]

describe('action key', () => {
  test.each(rows)('action key - $action.kind of $action.sessionId on $action.pod is $key', ({ action, key }) => {
    expect(actionKey(action)).toBe(key)
  })

  test('action key - a failure and a release of one session on one pod differ; the code and message do not count', () => {
    const keys = new Set(rows.map((row) => actionKey(row.action)))
    expect(keys).toEqual(new Set(['fail:s1:p1', 'release:s1:p1', 'release:s1:p2', 'release:chat room #1:p1']))
  })
})
