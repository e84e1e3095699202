import { describe, expect, test } from 'vitest'
import { FIRST_BACKOFF_MS, MAX_BACKOFF_MS, PassLoop, SOON_MS } from '../../controller/passes.ts'
import { ManualClock } from '../fixtures/manual-clock.ts'

function loop() {
  const clock = new ManualClock()
  let leading = true
  let passes = 0
  let release: (() => void) | undefined
  let hold = false
  const passLoop = new PassLoop({
    clock,
    leading: () => leading,
    pass: async () => {
      passes++
      if (hold) await new Promise<void>((resolve) => (release = resolve))
    },
  })
  return {
    clock,
    passLoop,
    passes: () => passes,
    stepDown: () => void (leading = false),
    hold: () => void (hold = true),
    release: () => {
      hold = false
      release?.()
    },
  }
}

/** The delay after which the next pass comes, found by moving the clock 1 ms at a time. */
async function delayUntilPass(l: ReturnType<typeof loop>, bound = MAX_BACKOFF_MS + 1): Promise<number | undefined> {
  const before = l.passes()
  for (let ms = 1; ms <= bound; ms++) {
    l.clock.advance(1)
    if (l.passes() > before) {
      await l.passLoop.settled()
      return ms
    }
  }
  return undefined
}

describe('pass loop', () => {
  test('pass loop - back-off doubles from FIRST_BACKOFF_MS with each failure in a row, up to MAX_BACKOFF_MS', async () => {
    const l = loop()
    const delays: (number | undefined)[] = []
    for (let failure = 0; failure < 10; failure++) {
      l.passLoop.backoff()
      delays.push(await delayUntilPass(l))
    }
    expect(FIRST_BACKOFF_MS).toBe(200)
    expect(delays).toEqual([200, 400, 800, 1_600, 3_200, 6_400, 12_800, 25_600, 30_000, 30_000])
  })

  test('pass loop - a pass that went through starts the back-off over', async () => {
    const l = loop()
    l.passLoop.backoff()
    await delayUntilPass(l)
    l.passLoop.backoff()
    await delayUntilPass(l)
    l.passLoop.succeeded()
    l.passLoop.backoff()
    expect(await delayUntilPass(l)).toBe(FIRST_BACKOFF_MS)
  })

  test('pass loop - soon is SOON_MS; the sooner of two wakes wins', async () => {
    const l = loop()
    l.passLoop.wake(l.clock.now() + 10_000)
    l.passLoop.soon()
    expect(await delayUntilPass(l)).toBe(SOON_MS)
    expect(await delayUntilPass(l, 20_000)).toBeUndefined()
  })

  test('pass loop - triggers during a pass coalesce into one more pass', async () => {
    const l = loop()
    l.hold()
    l.passLoop.trigger()
    l.passLoop.trigger()
    l.passLoop.trigger()
    expect(l.passes()).toBe(1)
    l.release()
    await l.passLoop.settled()
    expect(l.passes()).toBe(2)
  })

  test('pass loop - no pass while not leading, and none due after cancel', async () => {
    const l = loop()
    l.passLoop.wake(l.clock.now() + 100)
    l.passLoop.cancel()
    expect(await delayUntilPass(l, 1_000)).toBeUndefined()
    l.stepDown()
    l.passLoop.trigger()
    l.passLoop.soon()
    expect(await delayUntilPass(l, 1_000)).toBeUndefined()
  })
})
