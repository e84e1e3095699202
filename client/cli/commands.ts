import { parseArgs, type ParseArgsConfig } from 'node:util'
import type { ServiceEvent } from '../../contract/events.ts'
import type { AgentClient } from '../client.ts'
import { connect } from '../mod.ts'
import { EventPrinter, type Outputs } from './print.ts'
import { steer, type AskLine, type SteeringMode } from './steering.ts'

/** `agent-runtime run` and `agent-runtime attach`: the service's clients on the command line, built on client/. */

export const CLIENT_USAGE = `usage: agent-runtime run --url <address> [--api-key <key>] [--session <id>] [--work-dir <dir>] [--approve | --deny] [--json] "<prompt>"
       agent-runtime attach --url <address> [--api-key <key>] [--last-seq <n>] [--json] <session>

  run       runs one prompt and prints the turn: the answer on stdout, thinking, tool calls and
            totals on stderr; exits 0 when the turn completed, 1 on an error or a stop (Ctrl-C stops it)
            a tool call that waits for approval is asked on the terminal ([y] once, [a] always, [n] deny),
            a question lists its options to choose by number; --approve allows every call once and picks
            each question's first option, --deny denies and rejects all; with no terminal and neither flag,
            each request is printed with how to answer it, and denied
  attach    follows a session: its events after --last-seq (default 0: all of them), then live ones, until Ctrl-C

  --url defaults to $AGENT_RUNTIME_URL, --api-key to $AGENT_RUNTIME_API_KEY (a key on the command line is visible to ps);
  --json prints every event as one JSON line on stdout`

const COMMON = {
  url: { type: 'string' },
  'api-key': { type: 'string' },
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const satisfies ParseArgsConfig['options']

/** What a command reads from its process; tests pass their own. */
export interface CommandIo extends Outputs {
  env: NodeJS.ProcessEnv
  /** Asks a line on the terminal; absent when stdin is not one. */
  ask?: AskLine | undefined
  /** Called on each Ctrl-C (SIGINT) until the command ends. */
  onInterrupt(handler: () => void): () => void
}

/** Runs `run` or `attach` with its arguments; resolves to the exit code (2: a usage error). */
export async function clientCommand(command: 'run' | 'attach', argv: string[], io: CommandIo): Promise<number> {
  let parsed
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      options:
        command === 'run'
          ? { ...COMMON, session: { type: 'string' }, 'work-dir': { type: 'string' }, approve: { type: 'boolean' }, deny: { type: 'boolean' } }
          : { ...COMMON, 'last-seq': { type: 'string' } },
    })
  } catch (err) {
    io.err(`agent-runtime ${command}: ${(err as Error).message}\n${CLIENT_USAGE}\n`)
    return 2
  }
  const { values, positionals } = parsed
  const text = (name: string) => {
    const value = (values as Record<string, unknown>)[name]
    return typeof value === 'string' ? value : undefined
  }
  const flag = (name: string) => (values as Record<string, unknown>)[name] === true
  if (values.help) {
    io.out(`${CLIENT_USAGE}\n`)
    return 0
  }
  const url = text('url') ?? (io.env.AGENT_RUNTIME_URL || undefined)
  const problem =
    url === undefined
      ? 'give the service address with --url (or AGENT_RUNTIME_URL)'
      : positionals.length === 0
        ? command === 'run'
          ? 'give the prompt'
          : 'give the session id'
        : command === 'attach' && positionals.length > 1
          ? `one session id, not ${positionals.length}`
          : flag('approve') && flag('deny')
            ? '--approve and --deny exclude each other'
            : undefined
  const lastSeq = Number(text('last-seq') ?? 0)
  if (problem !== undefined || !Number.isSafeInteger(lastSeq) || lastSeq < 0) {
    io.err(`agent-runtime ${command}: ${problem ?? '--last-seq is a whole number, 0 or more'}\n${CLIENT_USAGE}\n`)
    return 2
  }
  let client: AgentClient
  try {
    client = await connect({ url: url!, apiKey: text('api-key') ?? (io.env.AGENT_RUNTIME_API_KEY || undefined) })
  } catch (err) {
    io.err(`agent-runtime ${command}: ${(err as Error).message}\n`)
    return 1
  }
  const show = values.json ? (event: ServiceEvent) => io.out(`${JSON.stringify(event)}\n`) : printer(io)
  try {
    if (command === 'run') {
      const mode: SteeringMode = flag('approve') ? 'approve' : flag('deny') ? 'deny' : io.ask !== undefined ? 'ask' : 'unattended'
      return await runPrompt(client.session(text('session')), positionals.join(' '), text('work-dir'), mode, show, io)
    }
    return await follow(client, positionals[0]!, lastSeq, show, io)
  } catch (err) {
    io.err(`agent-runtime ${command}: ${(err as Error).message}\n`)
    return 1
  } finally {
    client.close()
  }
}

function printer(io: Outputs): (event: ServiceEvent) => void {
  const events = new EventPrinter(io)
  return (event) => events.print(event)
}

async function runPrompt(
  session: ReturnType<AgentClient['session']>,
  prompt: string,
  workDir: string | undefined,
  mode: SteeringMode,
  show: (event: ServiceEvent) => void,
  io: CommandIo,
): Promise<number> {
  io.err(`session ${session.id}\n`)
  const unsteer = steer(session, mode, io)
  // The first Ctrl-C stops the turn (its events end with `stopped`); the process ends with the turn.
  const release = io.onInterrupt(() => void session.stop('interrupted').catch(() => {}))
  let last: ServiceEvent | undefined
  try {
    for await (const event of session.execute(prompt, workDir === undefined ? {} : { workDir })) {
      show(event)
      last = event
    }
  } finally {
    release()
    unsteer()
  }
  return last?.event === 'completed' ? 0 : 1
}

async function follow(client: AgentClient, sessionId: string, afterSeq: number, show: (event: ServiceEvent) => void, io: CommandIo): Promise<number> {
  const events = client.session(sessionId).follow({ afterSeq })
  // Ctrl-C ends the follow (the session goes on).
  const release = io.onInterrupt(() => void events.return?.())
  try {
    for await (const event of events) show(event)
  } finally {
    release()
  }
  return 0
}
