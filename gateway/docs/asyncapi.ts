import { Events, type EventName } from '../../contract/events.ts'
import { SERVICE_VERSION } from '../../contract/version.ts'
import { isClientVisible } from '../native/ws/dialect.ts'
import { ClientFrames } from '../../contract/frames.ts'
import { WS_PATH } from '../native/ws/route.ts'
import { toJsonSchema } from './json-schema.ts'

/**
 * The AsyncAPI 3.0 document of the native WebSocket (`GET /asyncapi.json`): the frames a client
 * sends (contract/frames.ts) and the events it receives (contract/events.ts), each
 * message's payload the JSON Schema of the zod schema that validates or types it. Pure.
 */
export function asyncApiDocument(): Record<string, unknown> {
  const frames = Object.entries(ClientFrames).map(([type, schema]) => ({
    name: `frame_${type}`,
    message: {
      name: type,
      title: `${type} frame`,
      summary: `A client's \`${type}\` request`,
      contentType: 'application/json',
      payload: toJsonSchema(schema, 'input', 'draft-7'),
    },
  }))
  const events = (Object.keys(Events) as EventName[])
    .filter((event) => isClientVisible({ event } as Parameters<typeof isClientVisible>[0]))
    .map((event) => ({
      name: `event_${event}`,
      message: {
        name: event,
        title: `${event} event`,
        summary: `The service's \`${event}\` event`,
        contentType: 'application/json',
        payload: toJsonSchema(Events[event], 'output', 'draft-7'),
      },
    }))
  const all = [...frames, ...events]
  const ref = (name: string) => ({ $ref: `#/channels/agent/messages/${name}` })
  return {
    asyncapi: '3.0.0',
    info: {
      title: 'Agent Runtime Service: native WebSocket',
      version: SERVICE_VERSION,
      description:
        'One JSON object per text frame. Requests carry `type`; events carry `event`, and `seq` when stored (a reconnecting client sends `last_seq` to get what it missed). The quick-start dialect (`session_start`, `prompt`) answers `{type, payload}` instead.',
    },
    channels: {
      agent: {
        address: WS_PATH,
        title: 'The native agent socket',
        messages: Object.fromEntries(all.map(({ name }) => [name, { $ref: `#/components/messages/${name}` }])),
        bindings: {
          ws: {
            method: 'GET',
            query: {
              type: 'object',
              properties: {
                session_id: { type: 'string', description: 'Follow this session from the start' },
                last_seq: { type: 'string', pattern: '^\\d{1,15}$', description: 'With session_id: replay the events after this sequence first' },
                api_key: { type: 'string', description: 'The API key, for clients that cannot set headers (browsers)' },
              },
            },
            bindingVersion: '0.1.0',
          },
        },
      },
    },
    operations: {
      receiveFrame: {
        action: 'receive',
        title: 'The service receives a client frame',
        channel: { $ref: '#/channels/agent' },
        messages: frames.map(({ name }) => ref(name)),
      },
      sendEvent: { action: 'send', title: 'The service sends an event', channel: { $ref: '#/channels/agent' }, messages: events.map(({ name }) => ref(name)) },
    },
    components: { messages: Object.fromEntries(all.map(({ name, message }) => [name, message])) },
  }
}
