/**
 * The web console: a key, the session list (GET /v1/sessions), one session's
 * events live (its own WebSocket, so each opened session is replayed whole),
 * a prompt, stop and stats, and cards to approve tool calls and answer the
 * agent's questions (cards.ts). Built into dist/app.js by scripts/build-console.ts.
 * Text from the service goes into the page as text nodes only, never as HTML.
 */
import type { ServiceEvent } from '../../contract/events.ts'
import type { SessionSummary } from '../../contract/sessions.ts'
import type { Stats } from '../../contract/stats.ts'
import { textBlock } from '../blocks.ts'
import { connect, type AgentClient, type ConnectionStatus, type Session } from '../browser.ts'
import { randomId } from '../ids.ts'
import { permissionCard, questionCard } from './cards.ts'
import { add } from './dom.ts'

const KEY_STORAGE = 'agent-runtime.api-key'
const LIST_REFRESH_MS = 5_000

function element<T extends HTMLElement>(id: string): T {
  const found = document.getElementById(id)
  if (found === null) throw new Error(`the page has no #${id}`)
  return found as T
}

const page = {
  key: element<HTMLInputElement>('api-key'),
  status: element('status'),
  sessions: element<HTMLUListElement>('sessions'),
  newSession: element<HTMLButtonElement>('new-session'),
  refresh: element<HTMLButtonElement>('refresh'),
  session: element('session'),
  sessionId: element('session-id'),
  stats: element('stats'),
  events: element('events'),
  prompt: element<HTMLTextAreaElement>('prompt'),
}

let apiKey: string | undefined
let opened: { client: AgentClient; session: Session; view: EventView } | undefined
let listTimer: ReturnType<typeof setInterval> | undefined

function showStatus(text: string): void {
  page.status.textContent = text
}

function statusText(status: ConnectionStatus): string {
  if (status.state === 'open') return 'connected'
  if (status.state === 'dropped') return 'connection lost, reconnecting…'
  if (status.state === 'reconnecting') return `reconnecting (try ${status.attempt}, in ${Math.round(status.delayMs / 1000)} s)…`
  return `disconnected${status.error ? `: ${status.error.message}` : ''}`
}

function authHeaders(): HeadersInit {
  return apiKey === undefined ? {} : { authorization: `Bearer ${apiKey}` }
}

async function loadSessions(): Promise<void> {
  const response = await fetch('/v1/sessions?limit=100', { headers: authHeaders() })
  const body = (await response.json()) as { sessions?: SessionSummary[]; code?: string; message?: string }
  if (!response.ok || body.sessions === undefined) throw new Error(`${response.status} ${body.code ?? ''} ${body.message ?? ''}`.trim())
  page.sessions.replaceChildren()
  for (const summary of body.sessions) {
    const item = add(page.sessions, 'li', '')
    const button = add(item, 'button', summary.state === 'busy' ? 'busy' : '', summary.session_id) as HTMLButtonElement
    button.type = 'button'
    button.title = `${summary.stats.turns} turns, $${summary.stats.total_cost_usd.toFixed(4)}, ${summary.queued_turns} queued`
    button.addEventListener('click', () => void openSession(summary.session_id))
  }
}

async function signIn(event: SubmitEvent): Promise<void> {
  event.preventDefault()
  apiKey = page.key.value.trim() === '' ? undefined : page.key.value.trim()
  if (apiKey === undefined) sessionStorage.removeItem(KEY_STORAGE)
  else sessionStorage.setItem(KEY_STORAGE, apiKey)
  try {
    await loadSessions()
  } catch (err) {
    showStatus(`the session list was refused: ${(err as Error).message}`)
    return
  }
  showStatus('signed in')
  page.newSession.disabled = page.refresh.disabled = false
  clearInterval(listTimer)
  listTimer = setInterval(() => void loadSessions().catch((err: unknown) => showStatus(`session list: ${(err as Error).message}`)), LIST_REFRESH_MS)
}

async function openSession(id: string): Promise<void> {
  opened?.client.close()
  opened = undefined
  page.session.hidden = false
  page.sessionId.textContent = id
  page.stats.textContent = ''
  page.events.replaceChildren()
  let client: AgentClient
  try {
    client = await connect({ url: location.origin, apiKey, onStatus: (status) => showStatus(statusText(status)) })
  } catch (err) {
    showStatus(`${(err as Error).message}; the service must list this page's origin (${location.origin}) in SERVICE_ALLOWED_ORIGINS`)
    return
  }
  showStatus('connected')
  const session = client.session(id)
  const view = new EventView(page.events, (stats) => (page.stats.textContent = statsText(stats)))
  opened = { client, session, view }
  // Requests still open when the replay is read, and every later one, get a card.
  session.onPermission((request, context) => permissionCard(page.events, session, request, context))
  session.onQuestion((request, context) => questionCard(page.events, session, request, context))
  for await (const event of session.follow()) view.show(event)
}

function send(event: SubmitEvent): void {
  event.preventDefault()
  const prompt = page.prompt.value.trim()
  if (opened === undefined || prompt === '') return
  page.prompt.value = ''
  opened.view.prompt(prompt)
  // The turn's events come through the session's follower; this only drives the request (and its retries).
  const turn = opened.session.execute(prompt)
  void (async () => {
    for await (const _ of turn) void _
  })()
}

function statsText(stats: Stats): string {
  return `${stats.turns} turns · ${stats.input_tokens} in / ${stats.output_tokens} out tokens · $${stats.total_cost_usd.toFixed(4)} · ${stats.tool_calls} tool calls · ${stats.errors} errors${stats.model ? ` · ${stats.model}` : ''}`
}

/** Renders a session's events: text blocks grow with their pieces, tool calls gather their output. */
class EventView {
  readonly #root: HTMLElement
  readonly #onStats: (stats: Stats) => void
  readonly #open: { answer?: HTMLElement | undefined; thinking?: HTMLElement | undefined } = {}
  readonly #tools = new Map<string, HTMLElement>()

  constructor(root: HTMLElement, onStats: (stats: Stats) => void) {
    this.#root = root
    this.#onStats = onStats
  }

  prompt(text: string): void {
    this.#line('event prompt', `> ${text}`)
  }

  show(event: ServiceEvent): void {
    const block = textBlock(event)
    if (block !== undefined) {
      const target = (this.#open[block.kind] ??= this.#line(`event ${block.kind}`, ''))
      target.textContent = block.piece ? target.textContent + block.text : block.text
      if (!block.piece) this.#open[block.kind] = undefined
    } else if (event.event === 'tool_use') {
      const tool = this.#line('event tool', `tool ${event.tool.name}`)
      add(tool, 'pre', 'input', JSON.stringify(event.tool.input, null, 2))
      this.#tools.set(event.tool.id, tool)
    } else if (event.event === 'tool_result') {
      const tool = this.#tools.get(event.tool.id) ?? this.#line('event tool', `tool ${event.tool.name ?? event.tool.id}`)
      add(tool, 'pre', event.is_error ? 'output failed' : 'output', event.data)
      tool.querySelector('.running')?.remove()
    } else if (event.event === 'task_boundary') {
      const tool = this.#tools.get(event.tool.id)
      if (tool)
        (tool.querySelector<HTMLElement>('.running') ?? add(tool, 'div', 'running')).textContent = `running for ${Math.round(event.elapsed_ms / 1000)} s`
    } else if (event.event === 'error') {
      this.#line('event error', `error ${event.error.code}: ${event.error.message}`)
    } else if (event.event === 'completed') {
      this.#line('event end completed', `completed · ${event.turn_stats.output_tokens} tokens out · $${event.turn_stats.total_cost_usd.toFixed(4)}`)
      this.#onStats(event.stats)
    } else if (event.event === 'stopped') {
      this.#line('event end stopped', `stopped${event.data ? `: ${event.data}` : ''}`)
    } else if (event.event === 'stats') {
      this.#onStats(event.stats)
    }
  }

  #line(className: string, text: string): HTMLElement {
    const line = add(this.#root, 'div', className, text)
    line.scrollIntoView({ block: 'end' })
    return line
  }
}

element<HTMLFormElement>('login').addEventListener('submit', (event) => void signIn(event))
element<HTMLFormElement>('prompt-form').addEventListener('submit', send)
element('stop').addEventListener(
  'click',
  () => void opened?.session.stop('stopped from the console').catch((err: unknown) => showStatus(`stop: ${(err as Error).message}`)),
)
element('load-stats').addEventListener(
  'click',
  () =>
    void opened?.session.stats().then(
      (stats) => (page.stats.textContent = statsText(stats)),
      (err: unknown) => showStatus(`stats: ${(err as Error).message}`),
    ),
)
page.newSession.addEventListener('click', () => void openSession(randomId(8)))
page.refresh.addEventListener('click', () => void loadSessions().catch((err: unknown) => showStatus(`session list: ${(err as Error).message}`)))
page.key.value = sessionStorage.getItem(KEY_STORAGE) ?? ''
