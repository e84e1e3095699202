/**
 * A runner frozen (SIGSTOP) past its lease, then thawed (SIGCONT): issue 16,
 * findings 3–5. Real processes: one gateway, two runners, a private
 * nats-server, the fake CLI.
 */
import { describe, expect, it, vi } from 'vitest'
import { clusterPerTest } from '../fixtures/cluster.ts'
import { ancestorAmong, fakeCliIn } from '../fixtures/processes.ts'

type Msg = Record<string, unknown>

const clusters = clusterPerTest()
const connect = clusters.connect

const ended = (id: unknown) => (msg: Msg) => msg.request_id === id && (msg.event === 'completed' || msg.event === 'error')

describe('a runner frozen past its lease', () => {
  it('freeze - the turn is taken over, the thawed runner publishes nothing more, timed-out prompts never run, the next turn loses nothing', async () => {
    // Lease 4 s (the fixture's); a runner that does not answer a command is given up after 3 s.
    const { cluster } = await clusters.start({ gateways: 1, runners: 2, overrides: { nats: { request_timeout: '3s' } } })
    const client = await connect(cluster.wsUrl(0))
    client.send({ type: 'execute', session_id: 'frz', prompt: 'stamped: 4000 200', request_id: 'long' })
    await vi.waitFor(() => expect(client.eventsOf('frz').filter((e) => e.event === 'answer').length).toBeGreaterThanOrEqual(20), { timeout: 20_000 })
    const owner = await ancestorAmong(
      await fakeCliIn(cluster.sandbox('frz')),
      cluster.runners.map((runner) => runner.child.pid!),
    )
    if (owner === undefined) throw new Error('the CLI of session frz descends from no runner')
    process.kill(owner, 'SIGSTOP')
    let frozen = true
    clusters.onCleanup(() => frozen && process.kill(owner, 'SIGCONT'))
    const frozenAt = Date.now()

    // Finding 5: the frozen runner's turn is taken over once its lease lapses, every time.
    const lost = await client.next(ended('long'), 30_000)
    expect(lost).toMatchObject({ event: 'error', error: { code: 'RUNNER_LOST' } })
    const lostAfterMs = Date.now() - frozenAt

    // Finding 4: prompts for new sessions while it is frozen; those placed on it time out.
    const fresh = Array.from({ length: 6 }, (_, i) => `frz-new-${i}`)
    for (const id of fresh) client.send({ type: 'execute', session_id: id, prompt: `run once ${id}`, request_id: id })
    const answers = await Promise.all(fresh.map((id) => client.next(ended(id), 30_000)))
    const timedOut = fresh.filter((_, i) => (answers[i]!.error as { code?: string } | undefined)?.code === 'RUNNER_TIMEOUT')
    for (const answer of answers)
      expect(['completed', 'RUNNER_TIMEOUT']).toContain(answer.event === 'completed' ? 'completed' : (answer.error as { code: string }).code)

    process.kill(owner, 'SIGCONT')
    frozen = false
    // The thawed runner has the CLI's buffered output and the prompts placed on it to deal with.
    // A fixed window on purpose: what follows asserts that nothing arrives, so there is no signal to wait on;
    // 4 s, a lease's length, gives the thawed runner time to publish whatever it would.
    await new Promise((resolve) => setTimeout(resolve, 4_000))

    // Finding 3: after RUNNER_LOST, nothing more of that turn from anyone.
    const lostTurn = lost.turn_id
    const lostSeq = lost.seq as number
    expect(client.eventsOf('frz').filter((e) => e.turn_id === lostTurn && (e.seq as number) > lostSeq)).toEqual([])
    // Finding 4: a prompt the client was told timed out never ran.
    const watcher = await connect(cluster.wsUrl(0))
    for (const id of timedOut) watcher.send({ type: 'attach', session_id: id, last_seq: 0 })
    // A fixed window on purpose: an attach to a session with no events is answered by nothing, so the
    // assertion is that nothing is replayed within 1.5 s.
    await new Promise((resolve) => setTimeout(resolve, 1_500))
    for (const id of timedOut) expect(watcher.eventsOf(id), id).toEqual([])

    // Finding 3: the next turn's events all arrive, once, in order (no sequence reused by the old owner).
    client.send({ type: 'execute', session_id: 'frz', prompt: 'stamped: 600 2000', request_id: 'next' })
    expect(await client.next(ended('next'), 30_000)).toMatchObject({ event: 'completed' })
    const next = client.eventsOf('frz').filter((e) => e.request_id === 'next')
    expect(next.filter((e) => e.event === 'answer')).toHaveLength(600)
    const seqs = next.map((e) => e.seq as number)
    expect(seqs).toEqual(Array.from({ length: seqs.length }, (_, i) => seqs[0]! + i))
    // And replay from the start agrees with what was delivered live.
    const replayer = await connect(cluster.wsUrl(0))
    replayer.send({ type: 'attach', session_id: 'frz', last_seq: 0 })
    await vi.waitFor(() => expect(replayer.eventsOf('frz').at(-1)?.seq).toBe(seqs.at(-1)), { timeout: 10_000 })
    const replayedSeqs = replayer.eventsOf('frz').map((e) => e.seq as number)
    expect(new Set(replayedSeqs).size).toBe(replayedSeqs.length)
    expect(lostAfterMs).toBeGreaterThan(0)
  }, 120_000)
})
