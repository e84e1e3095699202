import { afterEach, describe, expect, test } from 'vitest'
import type { ControllerObserver } from '../../controller/observer.ts'
import { byState, drive, startHarness, until, type Harness } from './harness.ts'

let h: Harness | undefined
afterEach(async () => {
  await h?.close()
  h = undefined
})

/** Records every reconcile pass the controller reports. */
const recording = () => {
  const passes: { seconds: number; errors: number }[] = []
  const observer: ControllerObserver = { reconciled: (seconds, errors) => passes.push({ seconds, errors }) }
  return { passes, observer }
}

describe('controller - observer', () => {
  test('every pass is reported with its duration; a clean fill has no errors', async () => {
    const { passes, observer } = recording()
    h = await startHarness({ warm_pool: 2 }, { observer })
    await until(() => byState(h!.pods(), 'warm').length === 2, 'warm pool')
    await h.controller.settled()
    expect(passes.length).toBe(h.controller.stats.passes)
    expect(passes.length).toBeGreaterThan(0)
    expect(passes.every((p) => p.seconds >= 0 && p.seconds < 5 && p.errors === 0)).toBe(true)
  })

  test('failed API calls are counted as errors of their pass', async () => {
    const { passes, observer } = recording()
    h = await startHarness({ warm_pool: 2 }, { observer })
    h.api.fail({ method: 'POST', resource: 'pods', status: 500, times: 3 })
    await drive(h, () => byState(h!.pods(), 'warm').length === 2, 'pool filled after the errors')
    expect(passes.reduce((sum, p) => sum + p.errors, 0)).toBe(3)
  })
})
