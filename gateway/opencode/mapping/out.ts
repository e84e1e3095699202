import type { OpencodeEvent, OpencodeEventOf, OpencodeEventType } from '../schemas/event.ts'
import type { MapContext, TurnEnd } from './state.ts'

/** What applying native events yields: the OpenCode events to publish, and the turns that ended. */
export interface MapResult {
  events: OpencodeEvent[]
  ended: TurnEnd[]
}

/** Adds an OpenCode event, with a fresh `evt_` id, to the result. */
export function emit<T extends OpencodeEventType>(out: MapResult, ctx: MapContext, type: T, properties: OpencodeEventOf<T>['properties']): void {
  out.events.push({ id: ctx.id('evt'), type, properties } as OpencodeEvent)
}
