import { Parser } from '@asyncapi/parser'
import { describe, expect, it } from 'vitest'
import { Events } from '../../../contract/events.ts'
import { asyncApiDocument } from '../../../gateway/docs/asyncapi.ts'
import { ClientFrames } from '../../../contract/frames.ts'

const parser = new Parser()

/** Diagnostics of severity error (0) of the official AsyncAPI parser. */
async function errorsOf(document: unknown): Promise<string[]> {
  const { diagnostics } = await parser.parse(JSON.stringify(document))
  return diagnostics.filter((diagnostic) => diagnostic.severity === 0).map((diagnostic) => `${diagnostic.path.join('.')}: ${diagnostic.message}`)
}

describe('asyncapi - the native WebSocket document', () => {
  it('asyncapi - is a valid AsyncAPI 3.0 document (@asyncapi/parser); a broken one is refused', async () => {
    const document = asyncApiDocument()
    expect(await errorsOf(document)).toEqual([])
    expect(await errorsOf({ ...document, asyncapi: '3.0.0', info: {} })).not.toEqual([])
  })

  it('asyncapi - every client frame and every event a client sees is a message, with its payload schema', async () => {
    const { document } = await parser.parse(JSON.stringify(asyncApiDocument()))
    const received = document!
      .operations()
      .get('receiveFrame')!
      .messages()
      .all()
      .map((message) => message.name())
    const sent = document!
      .operations()
      .get('sendEvent')!
      .messages()
      .all()
      .map((message) => message.name())
    expect(received.sort()).toEqual(Object.keys(ClientFrames).sort())
    expect(sent.sort()).toEqual(
      Object.keys(Events)
        .filter((event) => event !== 'turn_started')
        .sort(),
    )
    const execute = document!.components().messages().get('frame_execute')!.payload()!.json() as { required: string[]; properties: Record<string, unknown> }
    expect(execute.required).toEqual(['type', 'prompt'])
    const completed = document!.components().messages().get('event_completed')!.payload()!.json() as { properties: Record<string, unknown> }
    expect(Object.keys(completed.properties)).toEqual(expect.arrayContaining(['event', 'seq', 'stats', 'turn_stats']))
  })
})
