import type { EngineOutput } from '../engine/engine.ts'
import type { EventDraft } from '../event-draft.ts'

/**
 * The event a piece of CLI output makes within a running turn, if any. Pure:
 * `toolNames` (tool call id -> name, of the calls seen so far in the turn)
 * names the tool in a tool result. A `result` ends the turn and makes no event
 * here (the session decides how the turn ends); `init` and `noise` make none.
 */
export function outputEvent(output: EngineOutput, toolNames: ReadonlyMap<string, string>): EventDraft | undefined {
  switch (output.kind) {
    case 'thinking':
      return { event: 'thinking', data: output.text, ...(output.messageId && { message_id: output.messageId }) }
    case 'text':
      return { event: 'answer', data: output.text, ...(output.messageId && { message_id: output.messageId }) }
    case 'thinking_delta':
      return { event: 'thinking_delta', data: output.text, ...(output.messageId && { message_id: output.messageId }) }
    case 'text_delta':
      return { event: 'answer_delta', data: output.text, ...(output.messageId && { message_id: output.messageId }) }
    case 'tool_use':
      return {
        event: 'tool_use',
        data: output.name,
        tool: { id: output.id, name: output.name, input: output.input },
        ...(output.messageId && { message_id: output.messageId }),
      }
    case 'tool_result': {
      const name = toolNames.get(output.toolUseId)
      return {
        event: 'tool_result',
        data: output.content,
        tool: name === undefined ? { id: output.toolUseId } : { id: output.toolUseId, name },
        is_error: output.isError,
      }
    }
    case 'result':
    case 'init':
    case 'noise':
      return undefined
  }
}
