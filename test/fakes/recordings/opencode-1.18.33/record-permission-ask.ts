/**
 * Records what the REAL `opencode run` (1.18.33) does when its own permission
 * configuration says `ask`, and whether a plugin can answer, offline against
 * the fake Chat Completions API:
 *
 *   node test/fakes/recordings/opencode-1.18.33/record-permission-ask.ts
 *
 * writes permission-ask.json: per scenario, the plugin hooks that were called
 * (with their inputs), the JSON lines and stderr of the run, whether the
 * command ran, and the tool results the model was sent. Found so (why the
 * engine asks a person from `tool.execute.before`, over the gate channel):
 * with `permission: {bash: "ask"}` the run itself answers every
 * `permission.asked` with `reject` ("permission requested: bash (touch
 * canary); auto-rejecting" on stderr), the tool fails with "The user rejected
 * permission to use this specific tool call." and the turn ends without
 * another model request; the `permission.ask` plugin hook its docs list is
 * never called (1.18.33 triggers no such hook), so no plugin can answer an
 * ask. A `tool.execute.before` that waits (here 3 s) holds the call with no
 * time limit of the CLI's, then an allow runs it; a throw fails the call and
 * its message is the tool result the model reads.
 * Re-record when the CLI version changes.
 */
import { spawn } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { opencodeEnv, FAKE_MODEL } from '../../../e2e/engines/opencode.ts'
import { opencodeCli } from '../../../fixtures/opencode-cli.ts'
import { startFakeChat } from '../../openai-chat.ts'

/** A plugin that logs every hook call to LOG and answers as the scenario says. */
const PLUGIN = `import fs from 'node:fs'
const log = (entry) => fs.appendFileSync(process.env.RECORD_LOG, JSON.stringify(entry) + '\\n')
export const Recorder = async () => ({
  'permission.ask': async (input, output) => {
    log({ hook: 'permission.ask', input, status: output.status })
    output.status = 'allow'
  },
  'tool.execute.before': async (input, output) => {
    log({ hook: 'tool.execute.before', input, args: output.args })
    const answer = process.env.RECORD_BEFORE
    if (answer === 'wait-allow') await new Promise((resolve) => setTimeout(resolve, 3000))
    if (answer === 'deny') throw new Error('not that file')
  },
  event: async ({ event }) => {
    if (event.type === 'permission.asked' || event.type === 'permission.replied' || event.type.startsWith('question.')) log({ hook: 'event', event })
  },
})
`

interface Scenario {
  name: string
  permission?: Record<string, string>
  before: 'allow' | 'wait-allow' | 'deny'
}

const SCENARIOS: Scenario[] = [
  { name: 'bash: ask in the configuration, a permission.ask hook that allows', permission: { bash: 'ask' }, before: 'allow' },
  { name: 'no ask in the configuration, tool.execute.before waits 3 s then allows', before: 'wait-allow' },
  { name: 'no ask in the configuration, tool.execute.before throws "not that file"', before: 'deny' },
]

const command = await opencodeCli()
const api = await startFakeChat()
const out: unknown[] = []
try {
  for (const scenario of SCENARIOS) {
    const root = mkdtempSync(join(tmpdir(), 'opencode-ask-'))
    const home = join(root, 'home')
    const work = join(root, 'work')
    const plugin = join(root, 'recorder.mjs')
    const logFile = join(root, 'hooks.jsonl')
    writeFileSync(plugin, PLUGIN)
    writeFileSync(logFile, '')
    mkdirSync(work)
    const env = opencodeEnv(api.url, home)
    const config = {
      ...JSON.parse(env.OPENCODE_CONFIG_CONTENT ?? '{}'),
      plugin: [pathToFileURL(plugin).href],
      ...(scenario.permission && { permission: scenario.permission }),
    }
    const before = api.chatRequests().length
    const child = spawn(command, ['run', '--format', 'json', '--model', FAKE_MODEL], {
      cwd: work,
      env: { PATH: process.env.PATH ?? '', ...env, OPENCODE_CONFIG_CONTENT: JSON.stringify(config), RECORD_LOG: logFile, RECORD_BEFORE: scenario.before },
      stdio: ['pipe', 'pipe', 'pipe'],
    })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()))
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()))
    child.stdin.end('run: touch canary')
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve))
    const toolResults = api
      .chatRequests()
      .slice(before)
      .flatMap((request) => (Array.isArray(request.body?.messages) ? request.body.messages : []))
      .filter((message: { role?: string }) => message.role === 'tool')
      .map((message: { content?: unknown }) => message.content)
    out.push({
      scenario: scenario.name,
      config: { permission: scenario.permission ?? '(default)' },
      exitCode: code,
      hooks: readFileSync(logFile, 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line)),
      stdout: stdout
        .split('\n')
        .filter(Boolean)
        .map((line) => (line.startsWith('{') ? JSON.parse(line) : line)),
      stderr: stderr.split('\n').filter(Boolean),
      commandRan: existsSync(join(work, 'canary')),
      toolResultsSentToModel: [...new Set(toolResults)],
    })
    rmSync(root, { recursive: true, force: true })
  }
} finally {
  await api.stop()
}
const file = new URL('./permission-ask.json', import.meta.url)
writeFileSync(file, `${JSON.stringify(out, null, 2)}\n`)
console.log(`wrote ${file.pathname}`)
