import { execa } from 'execa'
import { killProcessGroup } from '../../process/terminate.ts'
import { CliEngine, CliVersion, spawnCli } from '../cli.ts'
import { readLines } from '../cli-lines.ts'
import type { EngineExit, EngineHandlers, EngineProcess, EngineStartOptions } from '../engine.ts'
import { startInstructions, TurnPrompts } from '../prompt.ts'
import { SessionUpdateMapper } from './map.ts'
import { decidePermission, isRejection } from './permission.ts'
import { methodNotFound, RpcError, RpcPeer } from './rpc.ts'
import { costOf, turnResult, type TurnEnd } from './turn.ts'

export interface AcpEngineConfig {
  /** The agent's command, e.g. `gemini` (with `--acp` in args), `claude-code-acp`, `codex-acp`. */
  command: string
  args: string[]
  /** `engine.env`, for the version probe (a session's process gets its whole env from the runner). */
  env?: Record<string, string>
  /** Longest stdout line kept; longer ones are dropped and reported. */
  maxLineBytes: number
  /** How long after stdin closed the agent may take to exit before its process group gets SIGTERM (claude-code-acp and codex-acp ignore EOF). */
  exitGraceMs?: number
}

/** ACP protocol version the runner speaks. */
const PROTOCOL_VERSION = 1
const DEFAULT_EXIT_GRACE_MS = 1000

type Obj = Record<string, unknown>

/**
 * Any agent that speaks the Agent Client Protocol on its stdio (JSON-RPC 2.0,
 * one JSON object a line), started once per session: `initialize`, then
 * `session/new` (or `session/load` of the agent's own session id to resume),
 * one `session/prompt` per turn, `session/cancel` to stop one. The agent's
 * `session/request_permission` goes through the tool gate (the WAF), then,
 * with engine.approval: ask, to a person (permission.ts). ACP has no request
 * by which an agent asks the person a question: only tool calls are steered.
 */
export class AcpEngine extends CliEngine<AcpEngineConfig> {
  constructor(config: AcpEngineConfig) {
    // The agent's name and version from its `initialize` answer (ACP agents have no common `--version`).
    super(
      'acp',
      config,
      new CliVersion(
        () => probeVersion(config),
        (err) => `${config.command}: no ACP initialize answer: ${err.message}`,
      ),
    )
  }

  async start(options: EngineStartOptions, handlers: EngineHandlers): Promise<EngineProcess> {
    const { command, args } = this.config
    // The peer writes to the child, which exists only once spawned; nothing is written before.
    let write = (_text: string) => {}
    const mapper = new SessionUpdateMapper()
    const emit = (outputs: ReturnType<SessionUpdateMapper['map']>) => {
      for (const output of outputs) {
        // The turn's answer is its last text block, as Claude Code's result says it.
        if (output.kind === 'text' && turn) turn.text = output.text
        handlers.onOutput(output)
      }
    }

    let sessionId: string | undefined
    /** Updates of a `session/load` replay the stored conversation: not news. */
    let loading = false
    let turn: { startedAt: number; cancelled: boolean; rejected?: boolean; text: string } | undefined
    let cumulativeCostUsd = 0
    /** Permission requests waiting for the gate; a cancel answers them `cancelled`. */
    const asking = new Set<(outcome: { outcome: 'cancelled' }) => void>()

    const rpc = new RpcPeer((text) => write(text), {
      onNotification(method, params) {
        if (method !== 'session/update' || loading || !isObj(params)) return
        const update = isObj(params.update) ? params.update : undefined
        if (update?.sessionUpdate === 'usage_update') cumulativeCostUsd = costOf(update) ?? cumulativeCostUsd
        emit(mapper.map(update))
      },
      async onRequest(method, params) {
        if (method !== 'session/request_permission') throw methodNotFound(method)
        const { outputs, call } = mapper.permissionAsked(isObj(params) ? params.toolCall : undefined)
        emit(outputs)
        const asked = turn
        const answer = await decidePermission({
          params,
          call,
          cwd: options.cwd,
          gate: options.toolGate,
          approver: options.approver,
          waitCancel: (answer) => asking.add(answer),
          done: (answer) => asking.delete(answer),
        })
        if (asked && isRejection(params, answer.outcome)) asked.rejected = true
        return answer
      },
      onNoise(text) {
        handlers.onOutput({ kind: 'noise', line: text })
      },
    })

    const endTurn = (end: TurnEnd) => {
      if (!turn) return
      emit(mapper.flush())
      const result = turnResult({
        end,
        cancelled: turn.cancelled,
        rejected: turn.rejected === true,
        durationMs: Date.now() - turn.startedAt,
        text: turn.text,
        cumulativeCostUsd,
      })
      turn = undefined
      handlers.onOutput({ kind: 'result', result })
    }

    const { child } = await spawnCli(command, args, options, {
      maxLineBytes: this.config.maxLineBytes,
      onLine: (line) => rpc.receive(line),
      onOverlong: (bytes) => handlers.onOverlong(bytes),
      onStderr: (line) => handlers.onStderr(line),
      // No more answers can come. A turn still running gets no result: the runner sees the exit (and may retry the turn).
      onStdoutEnd: () => rpc.close(new AgentGone()),
    })
    const pid = child.pid
    write = (text) => {
      if (child.stdin.writable) child.stdin.write(text)
    }

    loading = options.resume
    const session = this.#handshake(rpc, options).then(
      (opened) => {
        sessionId = opened.sessionId
        loading = false
        handlers.onOutput({ kind: 'init', cliSessionId: opened.sessionId, ...(opened.version !== undefined && { version: opened.version }) })
        return opened
      },
      (err: unknown) => {
        handlers.onStderr(`agent-runtime: ACP session setup failed: ${(err as Error).message}`)
        child.stdin.end()
        killProcessGroup(pid)
        throw err
      },
    )
    // The handshake's failure is reported to each turn; nothing else waits on it.
    session.catch(() => {})

    const exited: Promise<EngineExit> = child.then((result) => ({ code: result.exitCode ?? null, signal: result.signal ?? null }))
    let stopTimer: NodeJS.Timeout | undefined
    void exited.then(() => clearTimeout(stopTimer))
    const prompts = new TurnPrompts(options.instructions)

    return {
      pid,
      send: (prompt, instructions) => {
        const text = prompts.text(prompt, instructions)
        turn = { startedAt: Date.now(), cancelled: false, text: '' }
        session
          // A turn stopped before the session was open never reaches the agent.
          .then((opened) =>
            turn?.cancelled ? { stopReason: 'cancelled' } : rpc.request('session/prompt', { sessionId: opened.sessionId, prompt: [{ type: 'text', text }] }),
          )
          .then(
            (response) => endTurn({ response }),
            (err: unknown) => {
              if (err instanceof AgentGone) turn = undefined
              else endTurn({ error: (err as Error).message, conversationNotFound: err instanceof SessionLoadFailed })
            },
          )
          .catch(() => {})
      },
      interrupt: () => {
        if (!turn) return
        turn.cancelled = true
        for (const answer of asking) answer({ outcome: 'cancelled' })
        if (sessionId !== undefined) rpc.notify('session/cancel', { sessionId })
      },
      endInput: () => {
        child.stdin.end()
        // Gemini exits on EOF; claude-code-acp and codex-acp do not (codex-acp's wrapper even outlives a SIGTERM to its own pid).
        stopTimer = setTimeout(() => {
          try {
            process.kill(-pid, 'SIGTERM')
          } catch {}
        }, this.config.exitGraceMs ?? DEFAULT_EXIT_GRACE_MS)
      },
      exited,
    }
  }

  async #handshake(rpc: RpcPeer, options: EngineStartOptions): Promise<{ sessionId: string; version?: string }> {
    const init = await rpc.request('initialize', {
      protocolVersion: PROTOCOL_VERSION,
      // No files or terminals of the client's: the agent uses its own tools, which ask permission.
      clientCapabilities: { fs: { readTextFile: false, writeTextFile: false }, terminal: false },
      clientInfo: { name: 'agent-runtime', version: '1' },
    })
    const info = isObj(init) ? init : {}
    const version = agentVersion(info)
    if (options.resume && options.conversationId !== undefined) {
      const capabilities = isObj(info.agentCapabilities) ? info.agentCapabilities : {}
      if (capabilities.loadSession !== true) throw new Error('the agent cannot load a session (no loadSession capability)')
      await rpc.request('session/load', { sessionId: options.conversationId, cwd: options.cwd, mcpServers: [] }).catch((err: unknown) => {
        throw new SessionLoadFailed(options.conversationId ?? '', err)
      })
      return { sessionId: options.conversationId, ...(version !== undefined && { version }) }
    }
    const instructions = startInstructions(options)
    const opened = await rpc.request('session/new', {
      cwd: options.cwd,
      mcpServers: [],
      // claude-code-acp appends this to its system prompt; the others ignore `_meta`.
      ...(instructions !== undefined && { _meta: { systemPrompt: { append: instructions } } }),
    })
    if (!isObj(opened) || typeof opened.sessionId !== 'string') throw new Error('session/new answered no sessionId')
    return { sessionId: opened.sessionId, ...(version !== undefined && { version }) }
  }
}

/** `<name> <version>` from an initialize answer's `agentInfo`. */
function agentVersion(init: Obj): string | undefined {
  const info = isObj(init.agentInfo) ? init.agentInfo : undefined
  if (!info || typeof info.version !== 'string') return undefined
  return typeof info.name === 'string' ? `${info.version} (${info.name})` : info.version
}

/** The agent's output ended: it exited or is exiting. */
class AgentGone extends Error {
  constructor() {
    super('the agent closed its output')
    this.name = 'AgentGone'
  }
}

/** The agent could not load the stored session the runner asked for (its store is gone, or it never had it). */
class SessionLoadFailed extends Error {
  constructor(sessionId: string, cause: unknown) {
    super(`the agent could not load session ${sessionId}: ${rpcErrorText(cause)}`, { cause })
    this.name = 'SessionLoadFailed'
  }
}

/** An error answer's message with its `data.details` (Gemini puts the reason there, under "Internal error"). */
function rpcErrorText(err: unknown): string {
  const message = err instanceof Error ? err.message : String(err)
  const data = err instanceof RpcError && isObj(err.data) ? err.data : undefined
  return typeof data?.details === 'string' ? `${message}: ${data.details}` : message
}

/** Starts the agent, asks `initialize`, ends it. */
async function probeVersion(config: AcpEngineConfig): Promise<string> {
  const child = execa(config.command, config.args, {
    env: config.env ?? {},
    stdin: 'pipe',
    stdout: 'pipe',
    stderr: 'ignore',
    buffer: false,
    reject: false,
    detached: true,
    timeout: 20_000,
  })
  child.stdin.on('error', () => {})
  const rpc = new RpcPeer((text) => child.stdin.writable && child.stdin.write(text), {
    onNotification: () => {},
    onRequest: (method) => Promise.reject(methodNotFound(method)),
    onNoise: () => {},
  })
  void readLines(child.stdout, { maxLineBytes: 1024 * 1024 }, (text) => rpc.receive(text))
  void child.then((result) => rpc.close(new Error(`exited (${result.exitCode ?? result.signal})`)))
  try {
    const init = await rpc.request('initialize', {
      protocolVersion: PROTOCOL_VERSION,
      clientCapabilities: { fs: { readTextFile: false, writeTextFile: false }, terminal: false },
    })
    return agentVersion(isObj(init) ? init : {}) ?? 'unknown'
  } finally {
    child.stdin.end()
    if (child.pid !== undefined) killProcessGroup(child.pid)
  }
}

function isObj(v: unknown): v is Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v)
}
