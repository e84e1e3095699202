import { existsSync, rmSync } from 'node:fs'
import { mkdir, mkdtemp, rm } from 'node:fs/promises'
import net from 'node:net'
import os from 'node:os'
import path from 'node:path'
import { z } from 'zod'
import { HOOK_MAX_INPUT_BYTES, type HookReply, type HookRequest } from './hook-protocol.ts'

/** Decides one tool call the hook forwarded. Throwing is a deny. */
export type HookHandler = (request: HookRequest) => HookReply | Promise<HookReply>

export interface HookServerOptions {
  /** Where to make the server's private directory; the OS temp directory by default. */
  parentDir?: string
}

/** A hook that sends nothing for this long is cut off (it has its own, shorter deadline). */
const IDLE_MS = 30_000
/** Unix socket paths longer than this do not fit `sockaddr_un` on Linux. */
const MAX_SOCKET_PATH = 107
/** How often the server checks that its socket file is still there (an agent may delete it). */
const HEAL_EVERY_MS = 2_000

const HookRequestSchema = z.object({
  tag: z.string().min(1).max(200),
  tool_name: z.string().min(1).max(500),
  tool_input: z.unknown(),
  tool_use_id: z.string().max(500).optional(),
  session_id: z.string().max(500).optional(),
  cwd: z.string().optional(),
})

/** A failed request to the hook server: its reason goes back to the agent. */
export class HookRequestError extends Error {
  override readonly name = 'HookRequestError'
}

/**
 * The runner's end of the tool hook: a unix socket in a private directory
 * (mode 0700). Each connection carries one JSON request line and gets one
 * JSON reply line. A malformed or oversized request, or a handler that
 * throws, is answered with a deny: the hook never lets an unchecked call through.
 *
 * While the socket file is gone (an agent deleted it) every hook denies; the
 * server notices within HEAL_EVERY_MS, or at the next `ensureListening()`, and
 * listens again on the same path, which the running CLIs still know.
 */
export class WafHookServer {
  readonly socketPath: string
  /** The server's private directory; also holds the hook's Node compile cache. */
  readonly dir: string
  readonly #handler: HookHandler
  readonly #sockets = new Set<net.Socket>()
  #server: net.Server | undefined
  #healing: Promise<void> | undefined
  #timer: NodeJS.Timeout | undefined
  #closed = false
  /** A process that exits without close() still removes the directory. */
  readonly #onExit = () => rmSync(this.dir, { recursive: true, force: true })

  private constructor(dir: string, handler: HookHandler) {
    this.dir = dir
    this.socketPath = path.join(dir, 'hook.sock')
    this.#handler = handler
  }

  static async listen(handler: HookHandler, options: HookServerOptions = {}): Promise<WafHookServer> {
    const dir = await mkdtemp(path.join(options.parentDir ?? os.tmpdir(), 'ar-waf-'))
    const hook = new WafHookServer(dir, handler)
    try {
      if (Buffer.byteLength(hook.socketPath) > MAX_SOCKET_PATH) {
        throw new Error(`the WAF hook socket path ${hook.socketPath} is longer than ${MAX_SOCKET_PATH} bytes; use a shorter temporary directory (TMPDIR)`)
      }
      await mkdir(path.join(dir, 'node-cache'), { mode: 0o700 })
      await hook.#listen()
    } catch (err) {
      await rm(dir, { recursive: true, force: true })
      throw err
    }
    hook.#timer = setInterval(() => void hook.ensureListening().catch(() => {}), HEAL_EVERY_MS)
    hook.#timer.unref()
    process.once('exit', hook.#onExit)
    return hook
  }

  /** Listens again when the socket file was removed. */
  ensureListening(): Promise<void> {
    if (this.#closed || existsSync(this.socketPath)) return Promise.resolve()
    this.#healing ??= (async () => {
      const old = this.#server
      this.#server = undefined
      if (old) await new Promise<void>((resolve) => old.close(() => resolve()))
      await mkdir(path.join(this.dir, 'node-cache'), { recursive: true, mode: 0o700 })
      if (!this.#closed) await this.#listen()
    })().finally(() => (this.#healing = undefined))
    return this.#healing
  }

  /** Stops listening, cuts open connections (their hooks deny) and removes the directory. */
  async close(): Promise<void> {
    this.#closed = true
    clearInterval(this.#timer)
    process.off('exit', this.#onExit)
    await this.#healing?.catch(() => {})
    const server = this.#server
    this.#server = undefined
    const closed = server ? new Promise<void>((resolve) => server.close(() => resolve())) : undefined
    for (const socket of this.#sockets) socket.destroy()
    await closed
    await rm(this.dir, { recursive: true, force: true })
  }

  async #listen(): Promise<void> {
    const server = net.createServer((socket) => this.#serve(socket, this.#handler))
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject)
      server.listen(this.socketPath, () => {
        server.off('error', reject)
        resolve()
      })
    })
    this.#server = server
  }

  #serve(socket: net.Socket, handler: HookHandler): void {
    this.#sockets.add(socket)
    socket.on('close', () => this.#sockets.delete(socket))
    socket.on('error', () => {}) // a hook that went away: nothing to answer
    socket.setTimeout(IDLE_MS, () => socket.destroy())
    const chunks: Buffer[] = []
    let bytes = 0
    let answered = false
    const answer = (reply: HookReply) => {
      if (answered) return
      answered = true
      socket.end(JSON.stringify(reply) + '\n')
    }
    socket.on('data', (chunk: Buffer) => {
      if (answered) return
      const end = chunk.indexOf(0x0a)
      chunks.push(end < 0 ? chunk : chunk.subarray(0, end))
      bytes += chunk.length
      if (end < 0) {
        if (bytes > HOOK_MAX_INPUT_BYTES + 64 * 1024) answer({ decision: 'deny', reason: 'the tool call is too large for the WAF to check' })
        return
      }
      void decide(Buffer.concat(chunks).toString('utf8'), handler).then(answer)
    })
  }
}

async function decide(line: string, handler: HookHandler): Promise<HookReply> {
  try {
    const parsed = HookRequestSchema.safeParse(JSON.parse(line))
    if (!parsed.success) throw new HookRequestError(`malformed hook request: ${parsed.error.issues[0]?.message ?? 'invalid'}`)
    return await handler(parsed.data as HookRequest)
  } catch (err) {
    return { decision: 'deny', reason: `The agent runtime's WAF could not check this tool call, so it was not run: ${(err as Error).message}` }
  }
}
