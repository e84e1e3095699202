/**
 * Records what each REAL ACP agent (gemini --acp 0.61.0, claude-code-acp
 * 0.16.2, codex-acp 0.16.0) does with each answer to its
 * `session/request_permission`, offline against the fake model APIs, with
 * the conformance rows' set-up (test/e2e/engines/):
 *
 *   node test/fakes/recordings/record-acp-permission-answers.ts
 *
 * writes acp/permission-answers.json: per agent and answer, the options
 * offered, the stop reason of the turn, whether the command ran, and whether
 * the same command in the next turn asked again (after an "always" answer).
 * Re-record when an agent's version changes.
 */
import { spawn } from 'node:child_process'
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import { RpcPeer } from '../../../runner/engine/acp/rpc.ts'
import { claudeAcpRow } from '../../e2e/engines/claude-acp.ts'
import { codexAcpRow } from '../../e2e/engines/codex-acp.ts'
import { geminiRow } from '../../e2e/engines/gemini.ts'

type Option = { optionId: string; kind: string }
/** Which option to answer: by kind, or an id the agent did not offer. */
type Answer = { kind: string } | { optionId: string }

const ANSWERS: Answer[] = [{ kind: 'allow_always' }, { kind: 'reject_once' }, { optionId: 'denied' }]

async function run(row: typeof geminiRow, answer: Answer) {
  const fixture = await row.setup()
  const work = mkdtempSync(join(tmpdir(), 'acp-answers-'))
  const { command, args = [], env = {} } = fixture.config
  const child = spawn(command, args, { cwd: work, env, stdio: ['pipe', 'pipe', 'ignore'], detached: true })
  const asked: Option[][] = []
  const rpc = new RpcPeer((line) => child.stdin.write(line), {
    onNotification: () => {},
    onRequest: async (method, params) => {
      if (method !== 'session/request_permission') throw new Error(`not served: ${method}`)
      const options = (params as { options: Option[] }).options
      asked.push(options)
      const chosen = 'kind' in answer ? options.find((o) => o.kind === answer.kind)?.optionId : answer.optionId
      return { outcome: { outcome: 'selected', optionId: chosen ?? options.find((o) => o.kind === 'allow_once')?.optionId } }
    },
    onNoise: () => {},
  })
  createInterface({ input: child.stdout }).on('line', (line) => rpc.receive(line))
  try {
    await rpc.request('initialize', { protocolVersion: 1, clientCapabilities: { fs: { readTextFile: false, writeTextFile: false }, terminal: false } })
    const { sessionId } = (await rpc.request('session/new', { cwd: work, mcpServers: [] })) as { sessionId: string }
    const prompt = async (text: string) => {
      const before = asked.length
      const response = (await rpc
        .request('session/prompt', { sessionId, prompt: [{ type: 'text', text }] })
        .catch((err: Error) => ({ error: err.message }))) as Record<string, unknown>
      return { stopReason: response.stopReason ?? response.error, asked: asked.length - before }
    }
    const first = await prompt('run: touch first')
    const again = await prompt('run: touch first')
    return {
      options: asked[0],
      answered: answer,
      first: { ...first, ran: existsSync(join(work, 'first')) },
      sameCommandNextTurn: again,
      modelSawRejection: fixture.modelSaw('reject') || fixture.modelSaw('denied'),
    }
  } finally {
    // Ended before its HOME is removed (claude-code-acp writes there until it exits).
    const exited = new Promise((resolve) => child.once('exit', resolve))
    child.stdin.end()
    const kill = (signal: NodeJS.Signals) => {
      try {
        process.kill(-(child.pid ?? 0), signal)
      } catch {}
    }
    kill('SIGTERM')
    const force = setTimeout(() => kill('SIGKILL'), 3000)
    await exited
    clearTimeout(force)
    await fixture.stop()
    rmSync(work, { recursive: true, force: true })
  }
}

const results: Record<string, unknown[]> = {}
for (const row of [geminiRow, claudeAcpRow, codexAcpRow]) {
  results[row.name] = []
  for (const answer of ANSWERS) {
    const result = await run(row, answer)
    console.log(row.name, JSON.stringify(answer), JSON.stringify(result.first), JSON.stringify(result.sameCommandNextTurn))
    results[row.name]!.push(result)
  }
}
const out = new URL('./acp/permission-answers.json', import.meta.url)
writeFileSync(
  out,
  JSON.stringify(
    { agents: { gemini: '0.61.0', 'claude-code-acp': '0.16.2', 'codex-acp': '0.16.0' }, recorded: new Date().toISOString().slice(0, 10), results },
    null,
    1,
  ) + '\n',
)
console.log(`wrote ${out.pathname}`)
