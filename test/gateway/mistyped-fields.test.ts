/**
 * The surfaces' validation messages: "is required" only for a field that is
 * absent; a field of the wrong type says what was expected and what came.
 */
import { describe, expect, it } from 'vitest'
import { ServiceError } from '../../contract/mod.ts'
import { parseBody } from '../../gateway/json-body.ts'
import { AgentChatBody } from '../../gateway/native/agent-chat-route.ts'
import { parseFrame } from '../../gateway/native/ws/frames.ts'
import { CreateSessionBody, PromptBody } from '../../gateway/opencode/schemas/request.ts'

const failure = (run: () => unknown): ServiceError => {
  try {
    run()
  } catch (err) {
    if (err instanceof ServiceError) return err
    throw err
  }
  throw new Error('expected a refusal')
}

describe('mistyped fields', () => {
  it.each([
    [{ type: 'execute', prompt: 5 }, 'execute: field "prompt": expected string, got number'],
    [{ type: 'execute', prompt: null }, 'execute: field "prompt": expected string, got null'],
    [{ type: 'execute' }, 'execute: field "prompt" is required'],
    [{ type: 'stop', session_id: 7 }, 'stop: field "session_id": expected string, got number'],
    [{ type: 'stop' }, 'stop: field "session_id" is required'],
    [{ type: 'prompt', content: ['x'] }, 'prompt: field "content": expected string, got array'],
  ])('mistyped fields - the WebSocket frame %j', (frame, message) => {
    const err = failure(() => parseFrame(frame))
    expect(err.code).toBe('BAD_REQUEST')
    expect(err.message).toBe(message)
  })

  it.each([
    [AgentChatBody, { message: 5 }, 'field "message": expected string, got number'],
    [AgentChatBody, {}, 'field "message" is required'],
    [PromptBody, { prompt: 5 }, 'field "prompt": expected string, got number'],
    [CreateSessionBody, { work_dir: false }, 'field "work_dir": expected string, got boolean'],
  ] as const)('mistyped fields - a REST body (%#)', (schema, body, message) => {
    const err = failure(() => parseBody(schema, body))
    expect(err.code).toBe('BAD_REQUEST')
    expect(err.message).toBe(message)
  })
})
