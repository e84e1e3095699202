import Fastify from 'fastify'
import { afterEach, describe, expect, test } from 'vitest'
import { summarizePods } from '../../controller/status.ts'
import { ControllerMetrics } from '../../observability/controller-metrics.ts'
import { CONTROLLER_READY, registerControllerRoutes, type ControllerChecks } from '../../observability/controller-server.ts'
import { Readiness } from '../../observability/readiness.ts'
import { byState, startHarness, until, type Harness } from '../controller/harness.ts'
import { sample } from './prometheus.ts'

let h: Harness | undefined
afterEach(async () => {
  await h?.close()
  h = undefined
})

/** The controller's routes on an app that is never bound (inject), over a harness controller. */
async function serve(checks: () => Promise<ControllerChecks>, warmPool = 2) {
  let controller: Harness['controller'] | undefined
  const metrics = new ControllerMetrics({
    leading: () => controller?.leading ?? false,
    pods: () => summarizePods(controller?.leading ? controller.informer.pods() : []),
    warmPoolTarget: warmPool,
  })
  h = await startHarness({ warm_pool: warmPool }, { observer: metrics })
  controller = h.controller
  const app = Fastify()
  registerControllerRoutes(app, {
    metrics,
    leading: () => h!.controller.leading,
    readiness: new Readiness(checks, CONTROLLER_READY, { okTtlMs: 0, failTtlMs: 0 }),
  })
  return app
}

describe('controller server', () => {
  test('/metrics - leader, warm pool, pods by state and phase, reconcile passes', async () => {
    const app = await serve(async () => ({ bus: true, kube: true }))
    await until(() => byState(h!.pods(), 'warm').length === 2 && h!.pods().every((p) => p.status?.phase === 'Running'), 'warm pool running')
    await h!.controller.settled()
    const text = (await app.inject('/metrics')).body
    expect(sample(text, 'service_controller_leader')).toBe(1)
    expect(sample(text, 'service_controller_warm_pool_target')).toBe(2)
    expect(sample(text, 'service_controller_warm_pods')).toBe(2)
    expect(sample(text, 'service_controller_pods', { state: 'warm', phase: 'Running' })).toBe(2)
    expect(sample(text, 'service_controller_pods', { state: 'assigned', phase: 'Running' })).toBe(0)
    expect(sample(text, 'service_controller_reconcile_duration_seconds_count')).toBe(h!.controller.stats.passes)
    expect(sample(text, 'service_controller_reconcile_errors_total')).toBe(0)
    expect(sample(text, 'process_cpu_user_seconds_total')).toBeGreaterThan(0)
  })

  test('/metrics - a replica that does not lead reports leader 0 and no pods', async () => {
    const app = await serve(async () => ({ bus: true, kube: true }))
    await until(() => byState(h!.pods(), 'warm').length === 2, 'warm pool')
    await h!.controller.stop()
    const text = (await app.inject('/metrics')).body
    expect(sample(text, 'service_controller_leader')).toBe(0)
    expect(sample(text, 'service_controller_warm_pods')).toBe(0)
    expect(sample(text, 'service_controller_pods', { state: 'warm', phase: 'Running' })).toBe(0)
  })

  test.each([
    // checks, status code, status
    [{ bus: true, kube: true }, 200, 'ready'],
    [{ bus: false, kube: true }, 503, 'not_ready'],
    [{ bus: true, kube: false }, 503, 'not_ready'],
  ])('/readyz - %j: %i', async (checks, code, status) => {
    const app = await serve(async () => checks)
    const response = await app.inject('/readyz')
    expect(response.statusCode).toBe(code)
    expect(response.json()).toEqual({ status, leading: true, checks })
  })

  test('/readyz - a check that throws is not ready; /healthz stays alive', async () => {
    const app = await serve(async () => {
      throw new Error('API down')
    })
    const ready = await app.inject('/readyz')
    expect(ready.statusCode).toBe(503)
    expect(ready.json().checks).toEqual({ bus: false, kube: false })
    const live = await app.inject('/healthz')
    expect(live.statusCode).toBe(200)
    expect(live.json()).toEqual({ status: 'alive' })
  })
})
