import type { Bus } from '../bus/mod.ts'
import { subjects, type ServiceEvent } from '../contract/mod.ts'
import type { SessionRegistry } from '../state/mod.ts'
import type { SandboxErrorCode } from './events.ts'

/**
 * The controller's session errors as `error` events on the session's subject.
 * The controller owns no sequence (runners do), so these events carry none:
 * followers deliver them at once, and they are not replayed to a client that
 * resumes later. When the registry shows a turn running, the event ends it.
 */
export function publishSessionError(bus: Bus, registry: SessionRegistry, subjectPrefix: string) {
  const events = subjects(subjectPrefix)
  return async (sessionId: string, code: SandboxErrorCode, message: string): Promise<void> => {
    const record = (await registry.get(sessionId))?.value
    const event: ServiceEvent = { event: 'error', session_id: sessionId, ts: Date.now(), data: message, error: { code, message } }
    if (record?.state === 'busy' && record.turn_id !== undefined) {
      event.turn_id = record.turn_id
      if (record.turn_request_id !== undefined) event.request_id = record.turn_request_id
    }
    bus.publish(events.events(sessionId), JSON.stringify(event))
  }
}
