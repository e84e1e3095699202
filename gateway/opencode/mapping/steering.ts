import type { ServiceEvent, SteeringEvent } from '../../../contract/mod.ts'
import type { PermissionTool } from '../schemas/steering.ts'
import { emit, type MapResult } from './out.ts'
import { replyOfDecision, toPermission, toQuestion } from './requests.ts'
import type { MapContext, SessionView } from './state.ts'

/**
 * Steering events → OpenCode events, and the session's open requests kept in
 * its view (GET /permission, GET /question answer from them):
 *
 *   permission_request  → permission.asked (id kept; tool: the turn's assistant message and the call)
 *   permission_resolved → permission.replied once | always | reject (nothing for a request never
 *                         announced: one a rule decided, or one settled already)
 *   question            → question.asked (tool: the turn's running AskUserQuestion call, if any)
 *   question_resolved   → question.replied with the answers, else question.rejected
 *   turn end            → what the turn left open is settled as OpenCode settles the requests of
 *                         a cancelled session: permission.replied reject, question.rejected
 */

export type { SteeringEvent }

const STEERING = new Set<string>(['permission_request', 'permission_resolved', 'question', 'question_resolved'])

export function isSteeringEvent(event: ServiceEvent): event is SteeringEvent {
  return STEERING.has(event.event)
}

/** The tool name of Claude Code's question tool, whose call a question answers. */
const QUESTION_TOOLS = new Set(['AskUserQuestion', 'question'])

export function applySteering(view: SessionView, out: MapResult, ctx: MapContext, event: SteeringEvent): void {
  const { sessionID } = view
  const { permissions, questions } = view.steering
  switch (event.event) {
    case 'permission_request': {
      const { permission } = event
      if (permissions.has(permission.id)) return
      const callID = permission.tool.id
      const info = toPermission(permission, sessionID, view.directory, callID === undefined ? undefined : toolRef(view, event.turn_id, callID))
      permissions.set(info.id, { info, turnId: event.turn_id })
      emit(out, ctx, 'permission.asked', info)
      return
    }
    case 'permission_resolved':
      if (!permissions.delete(event.permission_id)) return
      emit(out, ctx, 'permission.replied', { sessionID, requestID: event.permission_id, reply: replyOfDecision(event.decision) })
      return
    case 'question': {
      if (questions.has(event.question.id)) return
      const info = toQuestion(event.question, sessionID, questionTool(view, event.turn_id))
      questions.set(info.id, { info, turnId: event.turn_id })
      emit(out, ctx, 'question.asked', info)
      return
    }
    case 'question_resolved':
      if (!questions.delete(event.question_id)) return
      if (event.answers === undefined) emit(out, ctx, 'question.rejected', { sessionID, requestID: event.question_id })
      else emit(out, ctx, 'question.replied', { sessionID, requestID: event.question_id, answers: event.answers })
      return
  }
}

/**
 * Settles what a turn that ended left open (`turnId`), or everything (none: the
 * session went idle). The runner settles its requests as the turn ends; this
 * covers a turn ended without that (its runner lost), so no client waits on it.
 */
export function endSteering(view: SessionView, out: MapResult, ctx: MapContext, turnId?: string): void {
  const { sessionID } = view
  for (const [id, waiting] of view.steering.permissions) {
    if (turnId !== undefined && waiting.turnId !== turnId) continue
    view.steering.permissions.delete(id)
    emit(out, ctx, 'permission.replied', { sessionID, requestID: id, reply: 'reject' })
  }
  for (const [id, waiting] of view.steering.questions) {
    if (turnId !== undefined && waiting.turnId !== turnId) continue
    view.steering.questions.delete(id)
    emit(out, ctx, 'question.rejected', { sessionID, requestID: id })
  }
}

/** The call's place among the session's messages: its turn's assistant message, once the turn runs. */
function toolRef(view: SessionView, turnId: string | undefined, callID: string): PermissionTool | undefined {
  const turn = turnId === undefined ? undefined : view.turns.get(turnId)
  return turn?.started ? { messageID: turn.plan.assistantMessageID, callID } : undefined
}

/** The question tool call the turn is running (the latest one), whose answer the question is. */
function questionTool(view: SessionView, turnId: string | undefined): PermissionTool | undefined {
  const turn = turnId === undefined ? undefined : view.turns.get(turnId)
  if (!turn?.started) return undefined
  let callID: string | undefined
  for (const part of turn.tools.values()) if (QUESTION_TOOLS.has(part.tool)) callID = part.callID
  return callID === undefined ? undefined : { messageID: turn.plan.assistantMessageID, callID }
}
