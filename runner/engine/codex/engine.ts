import { randomBytes } from 'node:crypto'
import os from 'node:os'
import path from 'node:path'
import { ServiceError } from '../../../contract/mod.ts'
import { SESSION_TAG_VAR } from '../../process/env.ts'
import { CliEngine, CliVersion, spawnCli } from '../cli.ts'
import type { EngineExit, EngineHandlers, EngineProcess, EngineStartOptions } from '../engine.ts'
import { TurnPrompts } from '../prompt.ts'
import { codexArgs, type CodexArgsConfig } from './args.ts'
import { AppServerSession } from './session.ts'
import { CodexToolGate, type HookDeciders } from './tool-gate.ts'

export interface CodexEngineConfig extends CodexArgsConfig {
  command: string
  /** Longest stdout line kept; longer ones are dropped and reported. */
  maxLineBytes: number
}

/**
 * How long the hook waits when a person is asked: the steering desk settles
 * the ask at its own approval_timeout (a deny), so this only bounds a runner
 * that never answers.
 */
const ASK_HOOK_SECONDS = 24 * 60 * 60

/** A Unix socket path must fit in sockaddr_un (108 bytes on Linux). */
const MAX_SOCKET_PATH = 100

/**
 * Codex driven over its app-server protocol (JSON-RPC, one JSON object a line
 * on stdio): one long-lived process per session, one `thread` (the CLI's own
 * conversation id, reported in `init`), a `turn/start` per prompt,
 * `turn/interrupt` to stop a turn. With a tool gate or an approver, a
 * PreToolUse hook asks the runner about every tool call before Codex runs it:
 * the WAF, then a person (tool-gate.ts). Codex's own approval requests
 * (item/commandExecution/requestApproval) come under approval_policy
 * on-request only for what a rules file of the deployment's CODEX_HOME says
 * to ask (none otherwise: test/fakes/recordings/codex-0.169.0/
 * app-server-approvals.json); they go to the WAF alone, so no person is asked
 * twice about one call. The app-server has no request by which the agent asks
 * the person a question.
 */
export class CodexEngine extends CliEngine<CodexEngineConfig> {
  constructor(config: CodexEngineConfig) {
    // Prints `codex-cli 0.169.0`.
    super('codex', config, CliVersion.of(config.command, [], 10_000))
  }

  async start(options: EngineStartOptions, handlers: EngineHandlers): Promise<EngineProcess> {
    const deciders: HookDeciders = { gate: options.toolGate, approver: options.approver }
    const listening = options.toolGate || options.approver ? await listenGate(options.controlDir, deciders) : undefined
    const gate = listening?.gate
    const hookSeconds = options.approver ? ASK_HOOK_SECONDS : (options.toolGate?.timeoutSeconds ?? 30)
    const args = codexArgs(this.config, {
      sessionTag: options.env[SESSION_TAG_VAR],
      gate: listening && { node: process.execPath, socketPath: listening.inside, timeoutSeconds: hookSeconds },
    })
    // The session writes to the child, which exists only once spawned; its first write is in begin() below.
    let write = (_message: object) => {}
    const session = new AppServerSession(options, handlers, (message) => write(message))
    const { child } = await spawnCli(this.config.command, args, options, {
      maxLineBytes: this.config.maxLineBytes,
      onLine: (line) => session.receive(line),
      onOverlong: (bytes) => handlers.onOverlong(bytes),
      onStderr: (line) => handlers.onStderr(line),
    }).catch(async (err: unknown) => {
      await gate?.close()
      throw err
    })
    const pid = child.pid
    write = (message) => {
      if (child.stdin.writable) child.stdin.write(`${JSON.stringify(message)}\n`)
    }
    const exited: Promise<EngineExit> = child.then(async (result) => {
      session.exited()
      await gate?.close()
      return { code: result.exitCode ?? null, signal: result.signal ?? null }
    })
    session.begin()
    const prompts = new TurnPrompts(options.instructions)
    return {
      pid,
      send: (prompt, instructions) => session.send(prompts.text(prompt, instructions)),
      interrupt: () => session.interrupt(),
      endInput: () => child.stdin.end(),
      exited,
    }
  }
}

/**
 * The tool gate's socket, in the launch's control directory: read-only in the
 * sandbox, so no command the agent ran can put a socket of its own in its place.
 * Without one (the engine driven directly, unsandboxed), a socket of its own in the temporary directory.
 */
async function listenGate(controlDir: EngineStartOptions['controlDir'], deciders: HookDeciders): Promise<{ gate: CodexToolGate; inside: string }> {
  const name = controlDir ? 'codex-gate.sock' : `ar-codex-gate-${randomBytes(4).toString('hex')}.sock`
  const dir = controlDir ?? { host: os.tmpdir(), inside: os.tmpdir() }
  const socketPath = path.join(dir.host, name)
  if (Buffer.byteLength(socketPath) > MAX_SOCKET_PATH) {
    throw new ServiceError(
      'ENGINE_START_FAILED',
      `the tool gate's socket path is too long (${socketPath}): a Unix socket path holds at most ${MAX_SOCKET_PATH} bytes`,
    )
  }
  return { gate: await CodexToolGate.listen(socketPath, deciders), inside: path.join(dir.inside, name) }
}
