import { BusNoRespondersError, BusTimeoutError, type Bus } from '../bus/mod.ts'
import { DemandAnswer, subjects, type DemandRequest } from '../contract/mod.ts'

/** Asks the leading controller for a pod for `sessionId` (Kubernetes; without a controller the answer is NOT_LEADER). */
export async function requestColdPod(bus: Bus, prefix: string, sessionId: string, timeoutMs: number): Promise<DemandAnswer> {
  try {
    const reply = await bus.request(subjects(prefix).controllerDemand, JSON.stringify({ session_id: sessionId } satisfies DemandRequest), { timeoutMs })
    return DemandAnswer.parse(JSON.parse(reply.data))
  } catch (err) {
    if (err instanceof BusNoRespondersError) return { ok: false, code: 'NOT_LEADER', message: 'no controller leads now' }
    if (err instanceof BusTimeoutError) return { ok: false, code: 'INTERNAL', message: `the controller did not answer within ${timeoutMs} ms` }
    throw err
  }
}
