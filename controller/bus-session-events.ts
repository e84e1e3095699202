import type { Bus } from '../bus/mod.ts'
import { subjects, type ServiceEvent } from '../contract/mod.ts'
import { unfinishedTurns, type RecordedTurn, type SessionRegistry } from '../state/mod.ts'
import type { SandboxErrorCode } from './events.ts'

/**
 * The controller's session errors as `error` events on the session's subject.
 * The controller owns no sequence (runners do), so these events carry none:
 * followers deliver them at once, and they are not replayed to a client that
 * resumes later. When the registry shows turns taken (running or waiting), one event ends each;
 * the turns ended are returned (the registry must forget them: see RegistrySessionEvents.fail).
 */
export function publishSessionError(bus: Bus, registry: SessionRegistry, subjectPrefix: string) {
  const events = subjects(subjectPrefix)
  return async (sessionId: string, code: SandboxErrorCode, message: string): Promise<RecordedTurn[]> => {
    const record = (await registry.get(sessionId))?.value
    const turns = record ? unfinishedTurns(record) : []
    for (const turn of turns.length > 0 ? turns : [undefined]) {
      const event: ServiceEvent = { event: 'error', session_id: sessionId, ts: Date.now(), data: message, error: { code, message } }
      if (turn) event.turn_id = turn.turn_id
      if (turn?.request_id !== undefined) event.request_id = turn.request_id
      bus.publish(events.events(sessionId), JSON.stringify(event))
    }
    return turns
  }
}
