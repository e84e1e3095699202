/**
 * Records how the REAL Codex app-server (0.169.0) asks its client to approve
 * a command and what each answer does, offline against the fake Responses
 * API, with the engine's own flags (approval_policy on-request,
 * danger-full-access) and execpolicy rules that say `prompt` for `touch` and
 * `ls`:
 *
 *   node test/fakes/recordings/record-codex-approvals.ts
 *
 * writes codex-0.169.0/app-server-approvals.json: per turn, the approval
 * requests (method and params), the answer given, whether the command ran,
 * and what the model was told. Found so (why the engine asks a person from
 * its PreToolUse hook, not from these requests): without such rules Codex
 * asks nothing under on-request and danger-full-access (0 requests for
 * `touch`); `approval_policy = "untrusted"` is refused at start ("no longer
 * supported"); a request offers only `availableDecisions: ["accept",
 * "cancel"]` although `acceptForSession` (not asked again for the same
 * command) and `decline` (the model reads only `rejected by user`) work.
 * Re-record when the CLI version changes.
 */
import { spawn } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import { codexArgs } from '../../../runner/engine/codex/args.ts'
import { codexBin, fakeProviderArgs } from '../../e2e/engines/codex.ts'
import { until } from '../../fixtures/until.ts'
import { startFakeResponses } from '../openai-responses.ts'

type Msg = { id?: number | string; method?: string; params?: Record<string, unknown>; result?: unknown; error?: unknown }

/** Each turn's prompt and the answer every approval request of that turn gets. */
const TURNS = [
  { prompt: 'run: touch approved', answer: 'accept', file: 'approved' },
  { prompt: 'run: touch session', answer: 'acceptForSession', file: 'session' },
  { prompt: 'run: touch session', answer: 'accept', file: 'session' },
  { prompt: 'run: touch declined', answer: 'decline', file: 'declined' },
  { prompt: 'run: ls', answer: 'accept', file: undefined },
]

const api = await startFakeResponses()
const home = mkdtempSync(join(tmpdir(), 'codex-home-'))
const work = mkdtempSync(join(tmpdir(), 'codex-work-'))
const args = codexArgs({ args: fakeProviderArgs(api.url), model: 'gpt-5.5' }, {})
mkdirSync(join(home, '.codex', 'rules'), { recursive: true })
writeFileSync(join(home, '.codex', 'rules', 'default.rules'), 'prefix_rule(pattern = [["touch", "ls"]], decision = "prompt")\n')
const child = spawn(codexBin, args, {
  cwd: work,
  env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: home, FAKE_OPENAI_API_KEY: 'fake-key' },
  stdio: ['pipe', 'pipe', 'inherit'],
})
const seen: Msg[] = []
let answerOf = 'accept'
let nextId = 0
const write = (msg: object) => child.stdin.write(`${JSON.stringify(msg)}\n`)
const replies = new Map<number, (msg: Msg) => void>()
const request = (method: string, params: unknown) =>
  new Promise<Msg>((resolve) => {
    const id = ++nextId
    replies.set(id, resolve)
    write({ id, method, params })
  })
createInterface({ input: child.stdout }).on('line', (line) => {
  const msg = JSON.parse(line) as Msg
  if (msg.method === undefined && typeof msg.id === 'number') return replies.get(msg.id)?.(msg)
  seen.push(msg)
  if (msg.id !== undefined && msg.method?.endsWith('/requestApproval')) write({ id: msg.id, result: { decision: answerOf } })
})

const turns = []
try {
  await request('initialize', { clientInfo: { name: 'recorder', title: null, version: '1' }, capabilities: null })
  write({ method: 'initialized' })
  const started = await request('thread/start', { cwd: work })
  const threadId = (started.result as { thread: { id: string } }).thread.id
  for (const turn of TURNS) {
    answerOf = turn.answer
    const from = seen.length
    const before = api.responseRequests().length
    await request('turn/start', { threadId, input: [{ type: 'text', text: turn.prompt, text_elements: [] }] })
    await until(() => seen.slice(from).some((m) => m.method === 'turn/completed'), `turn "${turn.prompt}" completed`, 60_000)
    const asked = seen.slice(from).filter((m) => m.method?.endsWith('/requestApproval'))
    const toModel = api
      .responseRequests()
      .slice(before)
      .flatMap((r) =>
        ((r.body as { input?: { type?: string; output?: unknown }[] }).input ?? []).filter((i) => i.type === 'function_call_output').map((i) => i.output),
      )
    turns.push({
      ...turn,
      asked: asked.map((m) => ({ method: m.method, params: m.params })),
      ran: turn.file ? existsSync(join(work, turn.file)) : undefined,
      toolOutputToModel: toModel.at(-1),
    })
    console.log(`${turn.prompt} (${turn.answer}): ${asked.length} request(s), ran ${String(turns.at(-1)?.ran)}`)
  }
} finally {
  child.stdin.end()
  child.kill()
  await api.stop()
  rmSync(home, { recursive: true, force: true })
  rmSync(work, { recursive: true, force: true })
}
const out = new URL('./codex-0.169.0/app-server-approvals.json', import.meta.url)
const text = JSON.stringify(
  { cli: 'codex-cli 0.169.0', recorded: new Date().toISOString().slice(0, 10), approval_policy: 'untrusted', turns },
  null,
  1,
).replaceAll(work, '/srv/work')
writeFileSync(out, text + '\n')
console.log(`wrote ${out.pathname}`)
