import { Readable } from 'node:stream'
import { setImmediate as nextTurn } from 'node:timers/promises'
import type { MessageWithParts } from './schemas/message.ts'

/** The content type fastify gives JSON answers. */
export const JSON_TYPE = 'application/json; charset=utf-8'

/** Parts serialized between two turns of the event loop: a fraction of a millisecond. */
export const PARTS_PER_SLICE = 256

/**
 * The JSON text of messages (GET /session/{id}/message) or of one message (a
 * blocking prompt's answer), made a slice of parts at a time with a turn of
 * the event loop between slices. A turn of 80,000 parts is some 17 MB of JSON,
 * about 100 ms of JSON.stringify at once: every other session and request
 * would wait that long (issue 16). The text is what JSON.stringify gives.
 *
 * The arrays are copied when called, so the text is of that moment: the
 * mapper grows a running turn's parts in place, but replaces part and info
 * objects rather than changing them, so sharing those is safe.
 */
export function messagesJson(messages: readonly MessageWithParts[]): Readable {
  return Readable.from(slices(snapshot(messages), '[', ']'), { objectMode: false })
}

/** One message as `{info, parts}`, like messagesJson. */
export function messageJson(message: MessageWithParts): Readable {
  return Readable.from(slices(snapshot([message]), '', ''), { objectMode: false })
}

function snapshot(messages: readonly MessageWithParts[]): MessageWithParts[] {
  return messages.map(({ info, parts }) => ({ info, parts: parts.slice() }))
}

async function* slices(messages: MessageWithParts[], open: string, close: string): AsyncGenerator<string> {
  let text = open
  let budget = PARTS_PER_SLICE
  for (const [m, { info, parts }] of messages.entries()) {
    text += `${m === 0 ? '' : ','}{"info":${JSON.stringify(info)},"parts":[`
    for (const [p, part] of parts.entries()) {
      text += (p === 0 ? '' : ',') + JSON.stringify(part)
      if (--budget > 0) continue
      yield text
      text = ''
      budget = PARTS_PER_SLICE
      await nextTurn()
    }
    text += ']}'
  }
  yield text + close
}
