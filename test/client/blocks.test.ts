import { describe, expect, it } from 'vitest'
import { blockRest, textBlock } from '../../client/blocks.ts'
import type { ServiceEvent } from '../../client/mod.ts'

describe('blocks - streamed pieces against the whole block', () => {
  it.each([
    ['', 'Hello world', 'Hello world'],
    ['Hello', 'Hello world', ' world'],
    ['Hello world', 'Hello world', ''],
    // Pieces lost to a reconnection, or not the block's start: the whole block on its own line.
    ['world', 'Hello world', '\nHello world'],
  ])('blocks - shown %j, block %j: adds %j', (shown, block, rest) => {
    expect(blockRest(shown, block)).toBe(rest)
  })

  it.each([
    [
      { event: 'answer', data: 'a' },
      { kind: 'answer', piece: false, text: 'a' },
    ],
    [
      { event: 'thinking', data: 't' },
      { kind: 'thinking', piece: false, text: 't' },
    ],
    [
      { event: 'answer_delta', data: 'p' },
      { kind: 'answer', piece: true, text: 'p' },
    ],
    [
      { event: 'thinking_delta', data: 'q' },
      { kind: 'thinking', piece: true, text: 'q' },
    ],
    [{ event: 'tool_result', data: 'out', tool: { id: 't1' }, is_error: false }, undefined],
    [{ event: 'stopped' }, undefined],
  ])('blocks - %j is %j', (event, block) => {
    expect(textBlock(event as ServiceEvent)).toEqual(block)
  })
})
