import { describe, expect, it } from 'vitest'
import type { Headers } from '../../bus/mod.ts'
import type { Command, ServiceEvent } from '../../contract/mod.ts'
import type { SpanAttributes, SpanHandle, SpanOptions, Tracing } from '../../observability/spans.ts'
import { TurnSpans } from '../../observability/turn-spans.ts'

interface Recorded {
  id: number
  name: string
  attributes: SpanAttributes
  parent: number | Headers | undefined
  failed?: string
  ended: boolean
}

/** A Tracing that records the span tree instead of exporting it. */
function recordingTracing() {
  const spans: Recorded[] = []
  const handles = new Map<SpanHandle, Recorded>()
  const tracing: Tracing = {
    startSpan(name: string, options: SpanOptions): SpanHandle {
      const parent = options.parent === undefined ? undefined : (handles.get(options.parent as SpanHandle)?.id ?? (options.parent as Headers))
      const record: Recorded = { id: spans.length, name, attributes: { ...options.attributes }, parent, ended: false }
      spans.push(record)
      const handle: SpanHandle = {
        traceId: 't',
        headers: () => ({}),
        setAttributes: (attributes) => Object.assign(record.attributes, attributes),
        fail: (code) => void (record.failed = code),
        end: () => {
          if (record.ended) throw new Error(`span ${name} ended twice`)
          record.ended = true
        },
      }
      handles.set(handle, record)
      return handle
    },
    shutdown: async () => {},
  }
  return { tracing, spans }
}

const execute = (turn: string, session = 's1'): Command => ({ type: 'execute', session_id: session, turn_id: turn, prompt: 'p' })
const ev = (event: Record<string, unknown>) => ({ session_id: 's1', ...event }) as unknown as ServiceEvent
const traceparent = { traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' }

describe('turn spans', () => {
  it('execute - session.execute from the command (parent from the bus headers) to completed; tool.use nested from tool_use to tool_result', () => {
    const { tracing, spans } = recordingTracing()
    const turns = new TurnSpans(tracing, 'ns')
    turns.command(execute('t1'), traceparent)
    turns.event(ev({ event: 'turn_started', turn_id: 't1', data: 'p' }))
    turns.event(ev({ event: 'tool_use', turn_id: 't1', data: 'Bash', tool: { id: 'tu1', name: 'Bash', input: {} } }))
    expect(spans[1]).toMatchObject({
      name: 'tool.use',
      parent: 0,
      ended: false,
      attributes: { 'session.id': 's1', namespace: 'ns', 'tool.name': 'Bash', 'tool.id': 'tu1' },
    })
    turns.event(ev({ event: 'tool_result', turn_id: 't1', data: 'ok', tool: { id: 'tu1', name: 'Bash' }, is_error: false }))
    expect(spans[1]!.ended).toBe(true)
    expect(spans[0]!.ended).toBe(false)
    turns.event(ev({ event: 'completed', turn_id: 't1', stats: {}, turn_stats: {} }))
    expect(spans[0]).toMatchObject({
      name: 'session.execute',
      parent: traceparent,
      ended: true,
      attributes: { 'session.id': 's1', namespace: 'ns', 'turn.id': 't1', 'turn.end': 'completed' },
    })
    expect(spans[0]!.failed).toBeUndefined()
    expect(turns.openTurns).toBe(0)
  })

  it.each([
    ['error', { event: 'error', data: 'x', error: { code: 'ENGINE_EXITED', message: 'x' } }, 'ENGINE_EXITED'],
    ['stopped', { event: 'stopped', data: 'by client' }, undefined],
  ])('end - %s ends the turn and the tool spans still open', (_name, end, failed) => {
    const { tracing, spans } = recordingTracing()
    const turns = new TurnSpans(tracing, 'ns')
    turns.command(execute('t1'), undefined)
    turns.event(ev({ event: 'tool_use', turn_id: 't1', data: 'Bash', tool: { id: 'tu1', name: 'Bash', input: {} } }))
    turns.event(ev({ turn_id: 't1', ...end }))
    expect(spans.map((span) => span.ended)).toEqual([true, true])
    expect(spans[0]!.failed).toBe(failed)
    expect(turns.openTurns).toBe(0)
  })

  it('tool - a failed tool_result and a WAF-denied call fail their tool span; a denied call does not end the turn', () => {
    const { tracing, spans } = recordingTracing()
    const turns = new TurnSpans(tracing, 'ns')
    turns.command(execute('t1'), undefined)
    turns.event(ev({ event: 'tool_use', turn_id: 't1', data: 'Bash', tool: { id: 'a', name: 'Bash', input: {} } }))
    turns.event(ev({ event: 'tool_result', turn_id: 't1', data: 'exit 1', tool: { id: 'a' }, is_error: true }))
    turns.event(ev({ event: 'tool_use', turn_id: 't1', data: 'Bash', tool: { id: 'b', name: 'Bash', input: {} } }))
    turns.event(ev({ event: 'error', turn_id: 't1', data: 'no', error: { code: 'WAF_BLOCKED', message: 'no' }, tool: { id: 'b', name: 'Bash' } }))
    expect(spans[1]!.failed).toBe('TOOL_ERROR')
    expect(spans[2]!.failed).toBe('WAF_BLOCKED')
    expect(spans[0]!.ended).toBe(false)
    expect(turns.openTurns).toBe(1)
  })

  it('refused - an execute the runner refuses ends its span failed at once', () => {
    const { tracing, spans } = recordingTracing()
    const turns = new TurnSpans(tracing, 'ns')
    turns.command(execute('t1'), undefined)
    turns.commandFailed(execute('t1'), { code: 'QUEUE_FULL', message: 'full' })
    expect(spans[0]).toMatchObject({ ended: true, failed: 'QUEUE_FULL' })
    expect(turns.openTurns).toBe(0)
  })

  it('other commands and unknown turns make no span', () => {
    const { tracing, spans } = recordingTracing()
    const turns = new TurnSpans(tracing, 'ns')
    turns.command({ type: 'stats', session_id: 's1' }, undefined)
    turns.command({ type: 'version' }, undefined)
    turns.event(ev({ event: 'tool_use', turn_id: 'unknown', data: 'Bash', tool: { id: 'x', name: 'Bash', input: {} } }))
    turns.event(ev({ event: 'stopped' }))
    expect(spans).toEqual([])
  })

  it('danger - a block is a span under the tool call it names, else under the running turn, else a root span', () => {
    const { tracing, spans } = recordingTracing()
    const turns = new TurnSpans(tracing, 'ns')
    turns.command(execute('t1'), undefined)
    turns.event(ev({ event: 'turn_started', turn_id: 't1', data: 'p' }))
    turns.event(ev({ event: 'tool_use', turn_id: 't1', data: 'Bash', tool: { id: 'tu1', name: 'Bash', input: {} } }))
    turns.dangerBlocked({
      session_id: 's1',
      tool_id: 'tu1',
      tool_name: 'Bash',
      category: 'filesystem_destruction',
      rule_id: 'fs.rm-root',
      operation: 'rm -rf /',
    })
    turns.dangerBlocked({ session_id: 's1', category: 'prompt', operation: 'print ~/.ssh/id_rsa' })
    turns.dangerBlocked({ session_id: 'other', category: 'prompt', operation: 'x' })
    const blocks = spans.filter((span) => span.name === 'security.danger_block')
    expect(blocks.map((span) => span.parent)).toEqual([1, 0, undefined])
    expect(blocks[0]).toMatchObject({
      ended: true,
      attributes: {
        'session.id': 's1',
        namespace: 'ns',
        'danger.operation': 'rm -rf /',
        'danger.category': 'filesystem_destruction',
        'danger.rule': 'fs.rm-root',
        'tool.name': 'Bash',
        'tool.id': 'tu1',
      },
    })
  })

  it('shutdown - endAll ends every open span once', () => {
    const { tracing, spans } = recordingTracing()
    const turns = new TurnSpans(tracing, 'ns')
    turns.command(execute('t1'), undefined)
    turns.command(execute('t2', 's2'), undefined)
    turns.event(ev({ event: 'tool_use', turn_id: 't1', data: 'Bash', tool: { id: 'a', name: 'Bash', input: {} } }))
    turns.endAll()
    expect(spans.every((span) => span.ended)).toBe(true)
    expect(turns.openTurns).toBe(0)
  })
})

describe('turn spans - steering', () => {
  it('permission.wait - from the request, under its tool call, to its settling, with the decision and who settled it', () => {
    const { tracing, spans } = recordingTracing()
    const turns = new TurnSpans(tracing, 'ns')
    turns.command(execute('t1'), undefined)
    turns.event(ev({ event: 'tool_use', turn_id: 't1', data: 'Bash', tool: { id: 'tu1', name: 'Bash', input: {} } }))
    turns.event(
      ev({
        event: 'permission_request',
        turn_id: 't1',
        data: 'Bash: ls',
        permission: { id: 'per_1', tool: { id: 'tu1', name: 'Bash', input: {} }, title: 'Bash: ls', options: [], expires_at: 1 },
      }),
    )
    expect(spans[2]).toMatchObject({ name: 'permission.wait', parent: 1, ended: false, attributes: { 'permission.kind': 'permission', 'tool.name': 'Bash' } })
    turns.event(
      ev({ event: 'permission_resolved', turn_id: 't1', data: 'allowed once', permission_id: 'per_1', decision: 'allow_once', source: 'client', waited_ms: 5 }),
    )
    expect(spans[2]).toMatchObject({ ended: true, attributes: { 'permission.decision': 'allow_once', 'permission.source': 'client' } })
  })

  it('permission.wait - a question under the turn; one still open when the turn ends is ended with it', () => {
    const { tracing, spans } = recordingTracing()
    const turns = new TurnSpans(tracing, 'ns')
    turns.command(execute('t1'), undefined)
    turns.event(ev({ event: 'question', turn_id: 't1', data: 'Q?', question: { id: 'que_1', questions: [], expires_at: 1 } }))
    expect(spans[1]).toMatchObject({ name: 'permission.wait', parent: 0, attributes: { 'permission.kind': 'question' } })
    turns.event(ev({ event: 'stopped', turn_id: 't1' }))
    expect(spans.map((span) => span.ended)).toEqual([true, true])
  })
})
