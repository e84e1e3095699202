import { ServiceError } from '../../contract/mod.ts'
import type { ModelRef } from './schemas/message.ts'
import type { PromptBody } from './schemas/request.ts'

/** A prompt body, whichever shape it came in, as one turn request. */
export interface PromptInput {
  /** `spec`: `{prompt, system_prompt, …}` (spec §2.5); `opencode`: `{parts, system, …}`. */
  shape: 'spec' | 'opencode'
  text: string
  instructions?: string
  agent?: string
  model?: ModelRef
  /** The user message id an OpenCode client chose. */
  messageID?: string
}

/**
 * Reads a validated prompt body. `prompt` wins over `parts` when both are
 * present; a body without prompt text is a BAD_REQUEST naming the field.
 */
export function toPromptInput(body: PromptBody, defaultProvider: string): PromptInput {
  if (body.noReply === true) {
    throw new ServiceError('BAD_REQUEST', 'field "noReply": not supported; every prompt runs a turn of the agent')
  }
  let shape: PromptInput['shape']
  let text: string
  if (body.prompt !== undefined) {
    shape = 'spec'
    text = body.prompt
    if (text.trim() === '') throw new ServiceError('BAD_REQUEST', 'field "prompt" must be a non-empty string')
  } else if (body.parts !== undefined) {
    shape = 'opencode'
    text = body.parts
      .filter((part) => part.type === 'text' && typeof part.text === 'string')
      .map((part) => part.text)
      .join('\n')
    if (text.trim() === '') throw new ServiceError('BAD_REQUEST', 'field "parts" must hold a part {type: "text", text} with non-empty text')
  } else {
    throw new ServiceError('BAD_REQUEST', 'field "prompt" is required (or "parts": [{type: "text", text}] as OpenCode sends it)')
  }
  const input: PromptInput = { shape, text }
  const instructions = body.system_prompt ?? body.system
  if (instructions !== undefined && instructions !== '') input.instructions = instructions
  if (body.agent !== undefined && body.agent !== '') input.agent = body.agent
  const model = toModelRef(body.model, defaultProvider)
  if (model) input.model = model
  if (body.messageID !== undefined && body.messageID !== '') input.messageID = body.messageID
  return input
}

/** `"provider/model"`, a bare `"model"`, or `{providerID, modelID}`. */
export function toModelRef(model: PromptBody['model'], defaultProvider: string): ModelRef | undefined {
  if (model === undefined || model === '') return undefined
  if (typeof model !== 'string') return { providerID: model.providerID, modelID: model.modelID }
  const slash = model.indexOf('/')
  if (slash <= 0) return { providerID: defaultProvider, modelID: model }
  return { providerID: model.slice(0, slash), modelID: model.slice(slash + 1) }
}
