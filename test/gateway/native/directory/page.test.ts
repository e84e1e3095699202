import { describe, expect, it } from 'vitest'
import { emptyStats, ServiceError, type ServiceEvent } from '../../../../contract/mod.ts'
import { SessionListQuery } from '../../../../contract/sessions.ts'
import { decodeCursor, encodeCursor, eventsPage, sessionPage, toSummary } from '../../../../gateway/native/directory/page.ts'
import type { SessionRecord } from '../../../../state/mod.ts'

const record = (session_id: string, created_at: number, extra: Partial<SessionRecord> = {}): SessionRecord => ({
  session_id,
  state: 'idle',
  cli_session_id: `cli-${session_id}`,
  created_at,
  last_active: created_at + 5,
  stats: emptyStats(),
  ...extra,
})

const query = (raw: Record<string, string | undefined> = {}) => SessionListQuery.parse(raw)

describe('directory page - summaries', () => {
  it("page - a busy record shows its turn, queue and owner; the CLI's own ids stay inside", () => {
    const summary = toSummary(
      record('s', 1, {
        state: 'busy',
        owner: 'runner-1',
        turn_id: 't1',
        turn_request_id: 7,
        queued: [{ turn_id: 't2' }, { turn_id: 't3' }],
        work_dir: '/w/s',
        engine: 'gemini',
      }),
    )
    expect(summary).toEqual({
      session_id: 's',
      state: 'busy',
      owner: 'runner-1',
      work_dir: '/w/s',
      engine: 'gemini',
      created_at: 1,
      last_active: 6,
      turn_id: 't1',
      queued_turns: 2,
      stats: emptyStats(),
    })
    expect(JSON.stringify(summary)).not.toContain('cli-s')
  })

  it('page - an idle, released record: no owner, no turn, nothing queued', () => {
    expect(toSummary(record('s', 1, { turn_id: 'stale' }))).toMatchObject({ owner: null, work_dir: null, engine: null, turn_id: null, queued_turns: 0 })
  })
})

describe('directory page - order, filter and cursor', () => {
  // Two sessions share a millisecond: the id orders them.
  const records = [record('b', 20), record('old', 10), record('a', 20), record('new', 30, { state: 'busy' }), record('c', 20)]

  it.each([
    { raw: {}, ids: ['new', 'a', 'b', 'c', 'old'], more: false },
    { raw: { limit: '2' }, ids: ['new', 'a'], more: true },
    { raw: { state: 'idle' }, ids: ['a', 'b', 'c', 'old'], more: false },
    { raw: { state: 'busy' }, ids: ['new'], more: false },
    { raw: { state: 'idle', limit: '4' }, ids: ['a', 'b', 'c', 'old'], more: false },
  ])('page - $raw gives $ids', ({ raw, ids, more }) => {
    const page = sessionPage(records, query(raw))
    expect(page.sessions.map((session) => session.session_id)).toEqual(ids)
    expect(page.next_cursor !== null).toBe(more)
  })

  it('page - walking the cursor visits every session once, in order, even when one is created meanwhile', () => {
    const seen: string[] = []
    const growing = [...records]
    let cursor: string | undefined
    do {
      const page = sessionPage(growing, query({ limit: '2', ...(cursor !== undefined && { cursor }) }))
      seen.push(...page.sessions.map((session) => session.session_id))
      // A newer session does not shift the pages after the first.
      growing.push(record(`later-${seen.length}`, 40 + seen.length))
      cursor = page.next_cursor ?? undefined
    } while (cursor !== undefined)
    expect(seen).toEqual(['new', 'a', 'b', 'c', 'old'])
  })

  it('page - a cursor round-trips; anything else is BAD_REQUEST', () => {
    expect(decodeCursor(encodeCursor({ created_at: 12, session_id: 'x/ÿ' }))).toEqual({ created_at: 12, session_id: 'x/ÿ' })
    for (const bad of [
      '',
      'not-base64!',
      Buffer.from('[1]').toString('base64url'),
      Buffer.from('["1","x"]').toString('base64url'),
      Buffer.from('{}').toString('base64url'),
    ]) {
      expect(() => decodeCursor(bad), bad).toThrow(ServiceError)
      try {
        decodeCursor(bad)
      } catch (err) {
        expect((err as ServiceError).code).toBe('BAD_REQUEST')
      }
    }
  })

  it.each([{ limit: '0' }, { limit: '201' }, { limit: '-1' }, { limit: '2.5' }, { state: 'asleep' }, { other: 'x' }])('page - query %j is refused', (raw) => {
    expect(SessionListQuery.safeParse(raw).success).toBe(false)
  })
})

describe('directory page - events', () => {
  const events: ServiceEvent[] = [3, 4, 5].map((seq) => ({ event: 'answer', data: `a${seq}`, seq, session_id: 's' }))

  it.each([
    { afterSeq: 2, limit: 10, seqs: [3, 4, 5], next: 5, more: false },
    { afterSeq: 2, limit: 2, seqs: [3, 4], next: 4, more: true },
    { afterSeq: 9, limit: 2, seqs: [], next: 9, more: false },
  ])('page - after $afterSeq, limit $limit: $seqs', ({ afterSeq, limit, seqs, next, more }) => {
    const stored = events.filter((event) => event.seq! > afterSeq)
    const page = eventsPage('s', stored, afterSeq, limit)
    expect(page.events.map((event) => event.seq)).toEqual(seqs)
    expect(page).toMatchObject({ session_id: 's', next_after_seq: next, has_more: more })
  })
})
