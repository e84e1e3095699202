import { spawn } from 'node:child_process'
import type { Duplex } from 'node:stream'
import { ServiceError } from '../../../contract/mod.ts'
import { SESSION_TAG_VAR } from '../../process/env.ts'
import { killProcessGroup, terminateSession } from '../../process/terminate.ts'
import { CliEngine, CliVersion } from '../cli.ts'
import { readCliLines } from '../cli-lines.ts'
import type { EngineExit, EngineHandlers, EngineProcess, EngineStartOptions } from '../engine.ts'
import { failedTurn, PerTurnProcess, type TurnProcess } from '../per-turn-process.ts'
import { TurnPrompts } from '../prompt.ts'
import { GATE_FD, runArgs, turnEnv, type OpenCodeArgsConfig } from './args.ts'
import { GateChannel } from './gate-channel.ts'
import { OpenCodeTurnMapper } from './map.ts'

export interface OpenCodeEngineConfig extends OpenCodeArgsConfig {
  command: string
  /** Longest stdout line kept; longer ones are dropped and reported. */
  maxLineBytes: number
}

/** How long a gated CLI may take to load the gate plugin before its turn is given up (a loaded machine took 11 s). */
const PLUGIN_READY_TIMEOUT_MS = 60_000
/** How long an interrupted turn's processes get between SIGTERM and SIGKILL (the runner waits 1 s for the turn's result). */
const STOP_GRACE_MS = 500
/** The last stderr lines kept to tell why a turn's run failed. */
const STDERR_TAIL = 10

/**
 * OpenCode driven as `opencode run --format json`, one process per turn
 * (per-turn-process.ts): the CLI keeps the conversation in its own store
 * under HOME, and each later turn continues it with `--session <id>` (the id
 * the first turn reported, or the one the runner passes back on resume). The
 * CLI loads gate-plugin.mjs, which asks the runner about each tool call over
 * a socket on fd 3 (the tool gate decides; the call is reported as tool_use
 * before it runs); the prompt is written to the CLI's stdin only once the
 * plugin said it is loaded, so no turn runs ungated. With an approver
 * (approval: ask) the same check waits for a person's answer about the calls
 * asks.ts names: `opencode run` rejects its own permission asks itself, so
 * they cannot be answered. OpenCode's questions are not put to a person yet
 * (`opencode run` answers none itself; see the README's engine table).
 */
export class OpenCodeEngine extends CliEngine<OpenCodeEngineConfig> {
  constructor(config: OpenCodeEngineConfig) {
    super('opencode', config, CliVersion.of(config.command, config.args, 30_000))
  }

  async start(options: EngineStartOptions, handlers: EngineHandlers): Promise<EngineProcess> {
    // Checked now, so a bad configuration fails the start rather than each turn.
    turnEnv(options.env)
    let sessionId = options.resume ? options.conversationId : undefined
    // `opencode run` takes no system prompt: a new conversation has none, and its first turn's instructions travel with its prompt.
    const prompts = new TurnPrompts(options.resume ? options.instructions : undefined)
    const startTurn = (prompt: string, instructions: string | undefined): Promise<TurnProcess> => {
      const text = prompts.text(prompt, instructions)
      // Resumed without the CLI's id: the newest conversation in this HOME (the session's own).
      const resumeLatest = options.resume && sessionId === undefined
      return this.#startTurn(options, handlers, text, sessionId, resumeLatest, (id) => {
        if (id === sessionId) return
        sessionId = id
        handlers.onOutput({ kind: 'init', cliSessionId: id })
      })
    }
    return new PerTurnProcess(startTurn, handlers)
  }

  async #startTurn(
    options: EngineStartOptions,
    handlers: EngineHandlers,
    prompt: string,
    sessionId: string | undefined,
    resumeLatest: boolean,
    onSession: (id: string) => void,
  ): Promise<TurnProcess> {
    const { command } = this.config
    const args = [...runArgs(this.config, sessionId), ...(resumeLatest ? ['--continue'] : [])]
    const line = options.wrap ? options.wrap(command, args) : { command, args }
    const child = spawn(line.command, line.args, {
      cwd: 'cwd' in line && line.cwd !== undefined ? line.cwd : options.cwd,
      env: turnEnv(options.env),
      // Its own process group, so the whole group can be signalled.
      detached: true,
      // fd 3: the gate plugin's socket.
      stdio: ['pipe', 'pipe', 'pipe', 'pipe'],
    })
    const spawnError = new Promise<Error>((resolve) => child.once('error', resolve))
    if (child.pid === undefined) {
      const err = await spawnError
      throw new ServiceError('ENGINE_START_FAILED', `cannot start ${command}: ${err.message}`, { cause: err })
    }
    const pid = child.pid
    const started = Date.now()
    const mapper = new OpenCodeTurnMapper()
    const stderrTail: string[] = []
    // A CLI that exits closes its stdin; a late write must not crash the service.
    child.stdin.on('error', () => {})

    const socket = child.stdio[GATE_FD] as Duplex
    const channel = new GateChannel({
      gate: options.toolGate,
      approver: options.approver,
      socket,
      cwd: options.cwd,
      onCall: (call) => {
        if (call.callId !== undefined) for (const output of mapper.toolStarting(call.callId, call.tool, call.args)) handlers.onOutput(output)
      },
    })
    // The prompt only once the plugin runs: without it, tools would run unchecked.
    const notReady = setTimeout(() => {
      handlers.onStderr(
        `agent-runtime: the OpenCode CLI did not load the tool gate plugin within ${PLUGIN_READY_TIMEOUT_MS / 1000} s; stopped before the prompt`,
      )
      killProcessGroup(pid)
    }, PLUGIN_READY_TIMEOUT_MS)
    void channel.ready.then(() => {
      clearTimeout(notReady)
      child.stdin.end(prompt)
    })
    child.once('exit', () => {
      clearTimeout(notReady)
      socket.destroy()
    })

    const read = readCliLines(child, {
      maxLineBytes: this.config.maxLineBytes,
      onLine: (text) => {
        for (const output of mapper.line(text)) {
          if (output.kind === 'init') {
            if (output.cliSessionId !== undefined) onSession(output.cliSessionId)
          } else handlers.onOutput(output)
        }
      },
      onOverlong: (bytes) => handlers.onOverlong(bytes),
      onStderr: (text) => {
        stderrTail.push(text)
        if (stderrTail.length > STDERR_TAIL) stderrTail.shift()
        handlers.onStderr(text)
      },
    })
    const exit = new Promise<EngineExit>((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })))
    const result = Promise.all([exit, read]).then(
      ([exited]) => mapper.result(exited, Date.now() - started, stderrTail),
      (err: unknown) => failedTurn(`reading the agent CLI failed: ${(err as Error).message}`),
    )
    const tag = options.env[SESSION_TAG_VAR]
    // Every process of the session: only this turn's run, and the tool commands it started in groups of their own.
    const stop = () => {
      if (tag === undefined) return killProcessGroup(pid)
      void terminateSession(pid, tag, STOP_GRACE_MS).catch(() => killProcessGroup(pid))
    }
    return { pid, result, stop }
  }
}
