import { isTurnEnd, type EventOf, type ServiceEvent } from '../../../contract/mod.ts'
import type { AssistantMessage, MessageWithParts, Part } from '../schemas/message.ts'
import { emit, type MapResult } from './out.ts'
import { finishTool, tokensOf, toolInput, toolTitle, turnError, zeroTokens } from './parts.ts'
import { applySteering, endSteering, isSteeringEvent } from './steering.ts'
import { makePlan, newTurn, type MapContext, type OpenStream, type SessionView, type TurnEnd, type TurnPlan, type TurnState } from './state.ts'

/**
 * The native → OpenCode mapping (spec §2.6): deterministic, no I/O; ids and
 * the clock come from the context, times from the native events' `ts`.
 *
 *   turn_started → user message + its text part, session.status busy,
 *                  assistant message, step-start part
 *   thinking_delta → reasoning part: updated (empty) at the first, then a delta per piece
 *   answer_delta   → text part: the same
 *   thinking     → closes the streamed reasoning part: updated (full, time.end); without deltas
 *                  before it, updated (empty), one delta (the whole block), updated (full)
 *   answer       → text part: the same
 *   tool_use     → tool part, state running {input, time.start}
 *   tool_result  → the same tool part (same id and callID), completed {output} or error
 *   completed    → step-finish part, assistant message with time.completed, tokens, cost
 *   stopped      → assistant message with MessageAbortedError, session.error
 *   error        → assistant message with the error, session.error (an error with `tool` — a
 *                  WAF-denied tool call — is not a turn end and maps to nothing: its tool_result says why)
 *   turn end     → session.status idle + session.idle once no turn is running or expected
 *   steering     → permission.asked / .replied, question.asked / .replied / .rejected (mapping/steering.ts)
 */
export type { MapResult } from './out.ts'

type Out = MapResult

/** Registers a turn a REST prompt is about to start; the session turns busy at once. */
export function planTurn(view: SessionView, plan: TurnPlan, ctx: MapContext): MapResult {
  const out: Out = { events: [], ended: [] }
  view.turns.set(plan.turnId, newTurn(plan))
  setStatus(view, out, ctx, 'busy')
  return out
}

/** Forgets a planned turn that will not start (its execute failed). */
export function dropTurn(view: SessionView, turnId: string, ctx: MapContext): MapResult {
  const out: Out = { events: [], ended: [] }
  const turn = view.turns.get(turnId)
  if (turn && !turn.started) view.turns.delete(turnId)
  settle(view, out, ctx)
  return out
}

/** Applies one native event of the session. */
export function applyEvent(view: SessionView, event: ServiceEvent, ctx: MapContext): MapResult {
  const out: Out = { events: [], ended: [] }
  // Steering may come with no turn: its requests are the session's (mapping/steering.ts).
  if (isSteeringEvent(event)) {
    applySteering(view, out, ctx, event)
    return out
  }
  const turnId = event.turn_id
  if (turnId === undefined) return out
  const at = event.ts ?? ctx.now()
  switch (event.event) {
    case 'turn_started':
      startTurn(view, out, ctx, turnFor(view, ctx, turnId), at, event.data, event.instructions)
      break
    case 'thinking_delta':
    case 'answer_delta': {
      // Live only: one that overtook its turn's start (or outlived its end) is dropped; the whole block follows.
      const turn = view.turns.get(turnId)
      if (turn?.started) streamDelta(view, out, ctx, turn, event.event === 'answer_delta' ? 'text' : 'reasoning', event, at)
      break
    }
    case 'thinking':
      streamedPart(view, out, ctx, running(view, out, ctx, turnId, at), 'reasoning', event.data, at)
      break
    case 'answer':
      streamedPart(view, out, ctx, running(view, out, ctx, turnId, at), 'text', event.data, at)
      break
    case 'tool_use':
      toolUse(view, out, ctx, running(view, out, ctx, turnId, at), event, at)
      break
    case 'tool_result':
      toolResult(view, out, ctx, running(view, out, ctx, turnId, at), event, at)
      break
    case 'completed':
    case 'stopped':
    case 'error':
      // A WAF-denied tool call is an error that does not end the turn; its tool part shows the denial.
      if (isTurnEnd(event)) endTurn(view, out, ctx, turnId, event, at)
      break
    default:
      break
  }
  return out
}

function turnFor(view: SessionView, ctx: MapContext, turnId: string): TurnState {
  let turn = view.turns.get(turnId)
  if (!turn) {
    // A turn this layer did not start (WebSocket, chat route): default metadata.
    turn = newTurn(makePlan(ctx, turnId))
    view.turns.set(turnId, turn)
  }
  return turn
}

/** The running turn; started on the spot when its turn_started was missed. */
function running(view: SessionView, out: Out, ctx: MapContext, turnId: string, at: number): TurnState {
  const turn = turnFor(view, ctx, turnId)
  if (!turn.started) startTurn(view, out, ctx, turn, at, undefined)
  return turn
}

function startTurn(view: SessionView, out: Out, ctx: MapContext, turn: TurnState, at: number, prompt: string | undefined, instructions?: string): void {
  if (turn.started) return
  turn.started = true
  const { plan } = turn
  const { sessionID } = view
  let parentID = ''
  if (prompt !== undefined) {
    const info: MessageWithParts['info'] = { id: plan.userMessageID, sessionID, role: 'user', time: { created: at }, agent: plan.agent, model: plan.model }
    const system = plan.system ?? instructions
    if (system !== undefined) info.system = system
    addMessage(view, info)
    emit(out, ctx, 'message.updated', { sessionID, info })
    putPart(view, out, ctx, { id: ctx.id('prt'), sessionID, messageID: info.id, type: 'text', text: prompt }, at)
    parentID = info.id
  }
  setStatus(view, out, ctx, 'busy')
  const assistant: AssistantMessage = {
    id: plan.assistantMessageID,
    sessionID,
    role: 'assistant',
    time: { created: at },
    parentID,
    modelID: plan.model.modelID,
    providerID: plan.model.providerID,
    mode: plan.agent,
    agent: plan.agent,
    path: { cwd: view.directory, root: view.directory },
    cost: 0,
    tokens: zeroTokens(),
  }
  addMessage(view, assistant)
  emit(out, ctx, 'message.updated', { sessionID, info: assistant })
  putPart(view, out, ctx, { id: ctx.id('prt'), sessionID, messageID: assistant.id, type: 'step-start' }, at)
}

/**
 * A whole text or reasoning block: closes the part its deltas streamed, with the block's text. A
 * block that came without deltas is announced empty, sent as one delta, and closed the same way.
 */
function streamedPart(view: SessionView, out: Out, ctx: MapContext, turn: TurnState, type: 'text' | 'reasoning', text: string, at: number): void {
  const open = turn.streams.get(type) ?? openStream(view, out, ctx, turn, type, undefined, at)
  turn.streams.delete(type)
  if (open.part.text === '') emitDelta(view, out, ctx, open.part, text)
  putPart(view, out, ctx, { ...open.part, text, time: { start: open.part.time?.start ?? at, end: at } }, at)
}

/** A piece of a block: a `message.part.delta` on the block's part, opened at its first piece. */
function streamDelta(
  view: SessionView,
  out: Out,
  ctx: MapContext,
  turn: TurnState,
  type: 'text' | 'reasoning',
  event: { data: string; message_id?: string | undefined },
  at: number,
): void {
  let open = turn.streams.get(type)
  // A piece of another API message: the block before it lost its whole text (never seen), close it as it stands.
  if (open && open.messageId !== event.message_id) closeStreams(view, out, ctx, turn, at, type)
  open = turn.streams.get(type) ?? openStream(view, out, ctx, turn, type, event.message_id, at)
  emitDelta(view, out, ctx, open.part, event.data)
  // The view keeps the text so far (GET /session/{id}/message mid-turn), without an event per piece.
  open.part = { ...open.part, text: open.part.text + event.data }
  storePart(view, open.part)
}

function openStream(
  view: SessionView,
  out: Out,
  ctx: MapContext,
  turn: TurnState,
  type: 'text' | 'reasoning',
  messageId: string | undefined,
  at: number,
): OpenStream {
  const open: OpenStream = {
    part: { id: ctx.id('prt'), sessionID: view.sessionID, messageID: turn.plan.assistantMessageID, type, text: '', time: { start: at } },
    messageId,
  }
  turn.streams.set(type, open)
  putPart(view, out, ctx, open.part, at)
  return open
}

/** Ends streamed parts whose whole block will not come (the turn ended, another message began) with the text they have. */
function closeStreams(view: SessionView, out: Out, ctx: MapContext, turn: TurnState, at: number, only?: 'text' | 'reasoning'): void {
  for (const [type, open] of turn.streams) {
    if (only !== undefined && type !== only) continue
    turn.streams.delete(type)
    putPart(view, out, ctx, { ...open.part, time: { start: open.part.time?.start ?? at, end: at } }, at)
  }
}

function emitDelta(view: SessionView, out: Out, ctx: MapContext, part: { id: string; messageID: string }, delta: string): void {
  emit(out, ctx, 'message.part.delta', { sessionID: view.sessionID, messageID: part.messageID, partID: part.id, field: 'text', delta })
}

function toolUse(view: SessionView, out: Out, ctx: MapContext, turn: TurnState, event: EventOf<'tool_use'>, at: number): void {
  const input = toolInput(event.tool.input)
  const part: Part = {
    id: ctx.id('prt'),
    sessionID: view.sessionID,
    messageID: turn.plan.assistantMessageID,
    type: 'tool',
    callID: event.tool.id,
    tool: event.tool.name,
    state: { status: 'running', input, title: toolTitle(event.tool.name, input), time: { start: at } },
  }
  turn.tools.set(part.callID, part)
  putPart(view, out, ctx, part, at)
}

function toolResult(view: SessionView, out: Out, ctx: MapContext, turn: TurnState, event: EventOf<'tool_result'>, at: number): void {
  const open = turn.tools.get(event.tool.id) ?? {
    id: ctx.id('prt'),
    sessionID: view.sessionID,
    messageID: turn.plan.assistantMessageID,
    type: 'tool' as const,
    callID: event.tool.id,
    tool: event.tool.name ?? 'unknown',
    state: { status: 'running' as const, input: {}, time: { start: at } },
  }
  turn.tools.delete(event.tool.id)
  putPart(view, out, ctx, finishTool(open, at, { output: event.data, isError: event.is_error }), at)
}

function endTurn(view: SessionView, out: Out, ctx: MapContext, turnId: string, event: ServiceEvent, at: number): void {
  const turn = view.turns.get(turnId)
  if (!turn) return // a turn this view never saw: nothing of it to close
  view.turns.delete(turnId)
  endSteering(view, out, ctx, turnId)
  const end = event.event as TurnEnd['end']
  const error = event.event === 'error' ? { code: event.error.code, message: event.error.message } : undefined
  if (!turn.started) {
    // Dropped from the queue before it ran: no messages were made for it.
    out.ended.push({ turnId, end, ...(error && { error }) })
    settle(view, out, ctx)
    return
  }
  closeStreams(view, out, ctx, turn, at)
  for (const open of turn.tools.values()) {
    putPart(view, out, ctx, finishTool(open, at, { output: 'the turn ended before the tool reported a result', isError: true }), at)
  }
  turn.tools.clear()
  const { entry } = view.index.get(turn.plan.assistantMessageID)!
  const previous = entry.info as AssistantMessage
  const info: AssistantMessage = { ...previous, time: { ...previous.time, completed: at } }
  if (event.event === 'completed') {
    const tokens = tokensOf(event.turn_stats)
    const cost = event.turn_stats.total_cost_usd
    putPart(view, out, ctx, { id: ctx.id('prt'), sessionID: view.sessionID, messageID: info.id, type: 'step-finish', reason: 'stop', cost, tokens }, at)
    Object.assign(info, { tokens, cost, finish: 'stop' })
    if (event.turn_stats.model) info.modelID = event.turn_stats.model
  } else {
    const message = event.event === 'error' ? event.error.message : (event.event === 'stopped' && event.data) || 'the turn was stopped'
    info.error = turnError(end as 'stopped' | 'error', message, error?.code)
  }
  entry.info = info
  emit(out, ctx, 'message.updated', { sessionID: view.sessionID, info })
  if (info.error) emit(out, ctx, 'session.error', { sessionID: view.sessionID, error: info.error })
  // A copy, once per turn: whoever holds the turn end keeps the parts it had.
  out.ended.push({ turnId, end, message: { info, parts: [...entry.parts] }, ...(error && { error }) })
  settle(view, out, ctx)
}

/** Adds a message to the view; with two messages of one id (a client's messageID used twice), parts go to the first. */
function addMessage(view: SessionView, info: MessageWithParts['info']): void {
  const entry: MessageWithParts = { info, parts: [] }
  view.messages.push(entry)
  if (!view.index.has(info.id)) view.index.set(info.id, { entry, parts: new Map() })
}

/**
 * Adds the part to its message, or puts it in the place of the part with the
 * same id, and announces it. Constant work per part, however long the message.
 */
function putPart(view: SessionView, out: Out, ctx: MapContext, part: Part, at: number): void {
  storePart(view, part)
  emit(out, ctx, 'message.part.updated', { sessionID: view.sessionID, part, time: at })
}

/** Puts the part in its message (in the place of the part with its id), announcing nothing. */
function storePart(view: SessionView, part: Part): void {
  const slot = view.index.get(part.messageID)
  if (slot) {
    const { parts } = slot.entry
    const index = slot.parts.get(part.id)
    if (index === undefined) {
      slot.parts.set(part.id, parts.length)
      parts.push(part)
    } else parts[index] = part
  }
}

function setStatus(view: SessionView, out: Out, ctx: MapContext, status: 'idle' | 'busy'): void {
  if (view.status === status) return
  view.status = status
  emit(out, ctx, 'session.status', { sessionID: view.sessionID, status: { type: status } })
  if (status === 'idle') emit(out, ctx, 'session.idle', { sessionID: view.sessionID })
}

/** Idle once no turn runs or waits. */
function settle(view: SessionView, out: Out, ctx: MapContext): void {
  if (view.turns.size > 0) return
  endSteering(view, out, ctx)
  setStatus(view, out, ctx, 'idle')
}
