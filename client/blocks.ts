import type { ServiceEvent } from '../contract/events.ts'

/**
 * Streamed text (answer_delta, thinking_delta) against the block that
 * follows it (answer, thinking): the deltas are live only, so a client that
 * reconnected mid-block has part of the text or none, and the block is the
 * whole. Pure.
 */

/** Which text block an event adds to, and whether it is a piece (delta) or the whole block. */
export function textBlock(event: ServiceEvent): { kind: 'answer' | 'thinking'; piece: boolean; text: string } | undefined {
  // Compared as strings: a service older than the delta events never sends them.
  const name: string = event.event
  if (!('data' in event) || typeof event.data !== 'string') return undefined
  if (name === 'answer' || name === 'thinking') return { kind: name, piece: false, text: event.data }
  if (name === 'answer_delta') return { kind: 'answer', piece: true, text: event.data }
  if (name === 'thinking_delta') return { kind: 'thinking', piece: true, text: event.data }
  return undefined
}

/**
 * What is left to show of a whole block after its pieces were shown: the
 * rest when the pieces began it, else (pieces lost or different) the whole
 * block on a line of its own.
 */
export function blockRest(shown: string, block: string): string {
  if (shown === '') return block
  return block.startsWith(shown) ? block.slice(shown.length) : `\n${block}`
}
