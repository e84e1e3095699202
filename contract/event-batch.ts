/**
 * What a message on a session's event subject carries: the JSON of one event,
 * or of several a runner published together (what one read of the CLI's output
 * made), one per line in sequence order. A message per event cost the bus
 * server more than the rest of the relay (store, deduplicate, acknowledge);
 * one per batch is that cost once. JSON.stringify never writes a raw line
 * break, so each line is exactly one event.
 */
export function joinEvents(texts: readonly string[]): string {
  return texts.length === 1 ? texts[0]! : texts.join('\n')
}

/** The events' JSON texts in a message on an event subject, in order. */
export function splitEvents(data: string): string[] {
  return data.includes('\n') ? data.split('\n') : [data]
}
