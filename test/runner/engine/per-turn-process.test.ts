import { describe, expect, it } from 'vitest'
import { ServiceError } from '../../../contract/mod.ts'
import type { EngineOutput, TurnResult } from '../../../runner/engine/engine.ts'
import { failedTurn, PerTurnProcess, type TurnProcess } from '../../../runner/engine/per-turn-process.ts'

const ok = (text: string, cost = 0): TurnResult => ({ ...failedTurn(''), isError: false, subtype: 'success', text, errors: undefined, cumulativeCostUsd: cost })

/** Turns the test ends by hand; no process is started or signalled (pids are made up). */
function harness(start?: (prompt: string) => Promise<TurnProcess>, onResult?: (result: TurnResult) => void) {
  const outputs: EngineOutput[] = []
  const turns: { prompt: string; end: (result: TurnResult) => void; stopped: boolean }[] = []
  let pid = 100_000
  const startTurn =
    start ??
    ((prompt: string) => {
      const { promise, resolve } = Promise.withResolvers<TurnResult>()
      const turn = { prompt, end: resolve, stopped: false }
      turns.push(turn)
      return Promise.resolve({ pid: ++pid, result: promise, stop: () => void (turn.stopped = true) })
    })
  const onOutput = (output: EngineOutput) => {
    outputs.push(output)
    if (output.kind === 'result') onResult?.(output.result)
  }
  const engine = new PerTurnProcess(startTurn, { onOutput, onOverlong: () => {}, onStderr: () => {} })
  const results = () => outputs.filter((o): o is Extract<EngineOutput, { kind: 'result' }> => o.kind === 'result').map((o) => o.result)
  return { engine, turns, results }
}

describe('per-turn-process - a process per turn behind one EngineProcess', () => {
  it('turns run one at a time, in order, each with one result; the cost is a running sum', async () => {
    const { engine, turns, results } = harness()
    expect(engine.pid).toBe(-1)
    engine.send('one')
    engine.send('two')
    await expect.poll(() => turns.length).toBe(1)
    expect(engine.pid).toBe(100_001)
    turns[0]!.end(ok('first', 0.25))
    await expect.poll(() => turns.length).toBe(2)
    expect(turns.map((t) => t.prompt)).toEqual(['one', 'two'])
    turns[1]!.end(ok('second', 0.5))
    await expect.poll(() => results().length).toBe(2)
    expect(results().map((r) => [r.text, r.cumulativeCostUsd])).toEqual([
      ['first', 0.25],
      ['second', 0.75],
    ])
  })

  it('prompts sent from within the result handler still run one at a time, in order', async () => {
    const { engine, turns } = harness(undefined, (result) => {
      if (result.text !== 'one') return
      engine.send('a')
      engine.send('b')
    })
    engine.send('first')
    await expect.poll(() => turns.length).toBe(1)
    turns[0]!.end(ok('one'))
    await expect.poll(() => turns.length).toBe(2)
    // b waits for a. The test is that nothing starts it: a turn would start through promise jobs only (no timer),
    // and all of those have run by the next turn of the event loop.
    await new Promise((resolve) => setImmediate(resolve))
    expect(turns).toHaveLength(2)
    turns[1]!.end(ok('a'))
    await expect.poll(() => turns.length).toBe(3)
    expect(turns.map((t) => t.prompt)).toEqual(['first', 'a', 'b'])
  })

  it('a turn that cannot start ends in one failed result; the next one still runs', async () => {
    let calls = 0
    const { engine, results } = harness(async () => {
      if (++calls === 1) throw new ServiceError('ENGINE_START_FAILED', 'cannot start opencode: ENOENT')
      return { pid: 5, result: Promise.resolve(ok('fine')), stop: () => {} }
    })
    engine.send('a')
    engine.send('b')
    await expect.poll(() => results().length).toBe(2)
    expect(results()[0]).toMatchObject({ isError: true, subtype: 'error_during_execution', text: 'cannot start opencode: ENOENT' })
    expect(results()[1]).toMatchObject({ isError: false, text: 'fine' })
  })

  it("an interrupt stops the turn's process; the turn ends as error_during_execution, whatever its process said", async () => {
    const { engine, turns, results } = harness()
    engine.send('long')
    await expect.poll(() => turns.length).toBe(1)
    engine.interrupt()
    expect(turns[0]!.stopped).toBe(true)
    turns[0]!.end(ok('late'))
    await expect.poll(() => results().length).toBe(1)
    expect(results()[0]).toMatchObject({ isError: true, subtype: 'error_during_execution' })
  })

  it('endInput - exits at once between turns, after the running turn otherwise; a later send gets a failed result', async () => {
    const idle = harness()
    idle.engine.endInput()
    expect(await idle.engine.exited).toEqual({ code: 0, signal: null })

    const busy = harness()
    busy.engine.send('x')
    busy.engine.send('queued, dropped')
    await expect.poll(() => busy.turns.length).toBe(1)
    busy.engine.endInput()
    let exited = false
    void busy.engine.exited.then(() => (exited = true))
    await Promise.resolve()
    expect(exited).toBe(false)
    busy.turns[0]!.end(ok('done'))
    expect(await busy.engine.exited).toEqual({ code: 0, signal: null })
    expect(busy.turns).toHaveLength(1)
    busy.engine.send('after')
    expect(busy.results().at(-1)).toMatchObject({ isError: true })
  })
})
