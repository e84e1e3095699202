import {
  emptyStats,
  type Answers,
  type PermissionDecision,
  type PermissionRequest,
  type QuestionRequest,
  type ResolutionSource,
  type ServiceEvent,
  type Stats,
} from '../../../contract/mod.ts'

/**
 * Native events as a runner publishes them for one session, for feeding the
 * mapper: `ts` counts up from 1000 in steps of 10, `seq` from 1 (deltas: none).
 */
export function nativeTurn(sessionId: string, turnId: string) {
  let seq = 0
  const stamp = <E extends ServiceEvent>(event: E): E => {
    seq++
    return { ...event, session_id: sessionId, turn_id: turnId, seq, ts: 1000 + seq * 10 }
  }
  const turnStats = (over: Partial<Stats> = {}): Stats => ({
    ...emptyStats(),
    input_tokens: 24,
    output_tokens: 84,
    cache_read_input_tokens: 3,
    cache_creation_input_tokens: 2,
    total_cost_usd: 0.001,
    turns: 1,
    model: 'claude-fake-1',
    ...over,
  })
  // Live-only events (token deltas) take a time but no sequence.
  const live = <E extends ServiceEvent>(event: E): E => ({ ...event, session_id: sessionId, turn_id: turnId, ts: 1000 + seq * 10 + 5 })
  return {
    answerDelta: (text: string, messageId = 'msg_api_1') => live({ event: 'answer_delta', data: text, message_id: messageId }),
    thinkingDelta: (text: string) => live({ event: 'thinking_delta', data: text, message_id: 'msg_api_1' }),
    started: (prompt: string, instructions?: string) => stamp({ event: 'turn_started', data: prompt, ...(instructions !== undefined && { instructions }) }),
    thinking: (text: string) => stamp({ event: 'thinking', data: text, message_id: 'msg_api_1' }),
    answer: (text: string, messageId = 'msg_api_1') => stamp({ event: 'answer', data: text, message_id: messageId }),
    toolUse: (id: string, input: unknown, name = 'Bash') => stamp({ event: 'tool_use', data: name, tool: { id, name, input }, message_id: 'msg_api_1' }),
    toolResult: (id: string, output: string, isError = false) => stamp({ event: 'tool_result', data: output, tool: { id, name: 'Bash' }, is_error: isError }),
    completed: (over: Partial<Stats> = {}) => stamp({ event: 'completed', stats: turnStats(over), turn_stats: turnStats(over), data: 'done' }),
    stopped: (reason?: string) => stamp({ event: 'stopped', ...(reason !== undefined && { data: reason }) }),
    error: (code: 'ENGINE_ERROR' | 'ENGINE_EXITED' | 'TURN_TIMEOUT', message: string) => stamp({ event: 'error', data: message, error: { code, message } }),
    /** A permission request for a Bash call (the desk's shape: every option, the CLI's "always" rule). */
    permission: (id: string, toolId: string | undefined, command: string, over: Partial<PermissionRequest> = {}) => {
      const permission: PermissionRequest = {
        id,
        tool: { ...(toolId !== undefined && { id: toolId }), name: 'Bash', input: { command } },
        title: `Bash: ${command}`,
        options: ['allow_once', 'allow_always', 'deny'],
        always: `Bash(${command} *)`,
        expires_at: 999_000,
        ...over,
      }
      return stamp({ event: 'permission_request', data: permission.title, permission })
    },
    resolved: (id: string, decision: PermissionDecision, source: ResolutionSource = 'client') =>
      stamp({ event: 'permission_resolved', data: decision, permission_id: id, decision, source, ...(source === 'client' && { by: 'websocket' }) }),
    question: (id: string, question: string, labels: string[]) => {
      const request: QuestionRequest = {
        id,
        questions: [{ question, header: 'Choice', options: labels.map((label) => ({ label })), multi_select: false }],
        expires_at: 999_000,
      }
      return stamp({ event: 'question', data: question, question: request })
    },
    answered: (id: string, answers?: Answers, source: ResolutionSource = 'client') =>
      stamp({ event: 'question_resolved', data: answers ? 'answered' : 'rejected', question_id: id, source, ...(answers !== undefined && { answers }) }),
  }
}
