import type { ServiceEvent } from '../contract/events.ts'

/** Room left in a message for headers and the envelope around the JSON. */
const HEADROOM_BYTES = 4 * 1024
const MARKER = '\n…[truncated: the event was larger than the bus allows]'

/** The bytes of event JSON a message may carry, `maxBytes` being the server's max_payload. */
export function messageRoom(maxBytes: number): number {
  return maxBytes - HEADROOM_BYTES
}

/**
 * The event's JSON, made to fit in `maxBytes`: a message larger than the
 * server's max_payload is refused for good, so the text (`data`) is cut, then
 * a tool's input is replaced by a note, and the event says `truncated: true`.
 */
export function fitEvent(event: ServiceEvent, maxBytes: number): string {
  const json = JSON.stringify(event)
  const limit = messageRoom(maxBytes)
  // A UTF-16 unit is at most 3 UTF-8 bytes: most events fit without counting their bytes.
  if (json.length * 3 <= limit || Buffer.byteLength(json) <= limit) return json
  const fitted = { ...event, truncated: true } as ServiceEvent & { data?: string; tool?: { input?: unknown } }
  if ('tool' in fitted && fitted.tool && 'input' in fitted.tool) {
    fitted.tool = { ...fitted.tool, input: { truncated: true } }
  }
  const rest = Buffer.byteLength(JSON.stringify({ ...fitted, data: '' }))
  if (typeof fitted.data === 'string') {
    // Bytes left for the text; JSON escaping can grow it, so cut by the escaped length.
    let keep = Math.max(0, limit - rest - MARKER.length * 2)
    let data = fitted.data.slice(0, keep)
    while (keep > 0 && Buffer.byteLength(JSON.stringify(data)) > limit - rest - MARKER.length * 2) {
      keep = Math.floor(keep * 0.9)
      data = fitted.data.slice(0, keep)
    }
    fitted.data = data + MARKER
  }
  return JSON.stringify(fitted)
}
