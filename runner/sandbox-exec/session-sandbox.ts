import { accessSync, constants, realpathSync, statSync } from 'node:fs'
import { mkdir, mkdtemp, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import type { Logger } from 'pino'
import { ServiceError } from '../../contract/mod.ts'
import { bwrapArgs, planMounts, type PathKind } from './bwrap-args.ts'
import type { EngineNetwork, SandboxMode } from './config.ts'
import { allowedTargets, isLoopback, targetKey } from './net-allow.ts'
import { NetGate } from './net-gate.ts'
import { probeBwrap } from './probe.ts'

/** The service's code (the WAF hook, the forwarder, a fake CLI in tests): kept visible even under a hidden HOME. */
const CODE_ROOT = fileURLToPath(new URL('../..', import.meta.url)).replace(/\/$/, '')
const FORWARDER = fileURLToPath(new URL('./forwarder.mjs', import.meta.url))
/** Where the network gate's directory appears inside a sandbox (under its private /run). */
export const GATE_DIR_INSIDE = '/run/agent-runtime'
/** The forwarder creates this once it listens; the launcher starts the CLI then. */
const FORWARDER_READY = '/tmp/.agent-runtime-net-ready'
/** The proxy port inside the sandbox that HTTPS_PROXY names (moved up if a forwarded model API uses it). */
const PROXY_PORT = 3128
/** Files of the system no session needs, hidden even from a service running as root. */
const SYSTEM_SECRETS = ['/etc/shadow', '/etc/gshadow', '/etc/shadow-', '/etc/gshadow-', '/etc/sudoers']

/**
 * Starts the forwarder in the background, waits (at most about 5 s) until it
 * listens, then becomes the CLI. `$1` node, `$2` forwarder, `$3` its spec.
 */
const LAUNCH_WITH_FORWARDER = [
  'node=$1 fwd=$2 spec=$3; shift 3',
  '(cd / && exec "$node" "$fwd" "$spec" </dev/null >/dev/null) &',
  'i=0',
  `while [ ! -e ${FORWARDER_READY} ]; do`,
  '  i=$((i+1)); if [ "$i" -gt 1000 ]; then echo "agent-runtime sandbox: the network forwarder did not start" >&2; exit 1; fi',
  '  sleep 0.005',
  'done',
  'exec "$@"',
].join('\n')

export interface SandboxSettings {
  /** `sandbox.mode` as configured. */
  mode: SandboxMode
  /** The bwrap executable. */
  command: string
  /** Absolute base of the per-session CLI state directories. */
  stateDir: string
  /** The service's data that no session may see (absolute): the sandbox base, the marker dir, the config file, credential files, `sandbox.hide`. */
  hide: readonly string[]
  network: EngineNetwork
  /** `engine.network_allow`. */
  networkAllow: readonly string[]
  /** `engine.env`: a HOME set there is kept (and bound read-write) instead of the per-session one. */
  engineEnv: Readonly<Record<string, string>>
  /** `engine.command` and `engine.args`: what the CLI needs to start, kept visible. */
  engineCommand: string
  engineArgs: readonly string[]
}

/** What a session's CLI is started with. */
export interface Launch {
  /** `bwrap` or `none`. */
  readonly mode: 'bwrap' | 'none'
  /** The CLI's whole environment. */
  readonly env: Record<string, string>
  /** The command line that runs `command args` in the sandbox; `cwd` is where the launcher itself starts (none: the sandbox directory). */
  wrap(command: string, args: readonly string[]): { command: string; args: string[]; cwd?: string }
  /** Closes what the sandbox needed beside the CLI (the network gate); after the CLI exited. */
  dispose(): Promise<void>
}

export interface LaunchRequest {
  /** Names the session's CLI state directory (the CLI conversation id: stable, file-name safe). */
  key: string
  /** The session's sandbox directory (read-write, the CLI's cwd). */
  workDir: string
  /** The CLI's environment from runner/process/env.ts. */
  env: Record<string, string>
  /** Host directories to bind read-only at the same path (the WAF hook socket's). */
  readOnly?: readonly string[]
}

export type ResolvedSandbox = { mode: 'bwrap' } | { mode: 'none'; reason: string }

/**
 * The kernel sandbox of a runner's sessions (README "Session sandbox"):
 * decides once whether bubblewrap works here, then wraps each CLI start.
 */
export class SessionSandbox {
  readonly #settings: SandboxSettings
  readonly #log: Logger | undefined
  readonly #programs: string[]
  #resolved: Promise<ResolvedSandbox> | undefined
  #mode: 'bwrap' | 'none' | undefined

  constructor(settings: SandboxSettings, log?: Logger) {
    this.#settings = settings
    this.#log = log
    this.#programs = programPaths(settings.engineCommand, settings.engineArgs)
  }

  /** The mode in force once resolve() finished. */
  get mode(): 'bwrap' | 'none' | undefined {
    return this.#mode
  }

  get network(): EngineNetwork {
    return this.#settings.network
  }

  /** Probes bwrap once (`auto`, `bwrap`); `bwrap` that does not work here is an error. */
  resolve(): Promise<ResolvedSandbox> {
    this.#resolved ??= (async (): Promise<ResolvedSandbox> => {
      const { mode, command } = this.#settings
      if (mode === 'none') return { mode: 'none', reason: 'sandbox.mode is none' }
      const probe = await probeBwrap(command)
      if (probe.ok) return { mode: 'bwrap' }
      if (mode === 'bwrap') throw new Error(`sandbox.mode is bwrap, but bubblewrap cannot make a sandbox here: ${probe.reason}`)
      return { mode: 'none', reason: probe.reason }
    })().then((resolved) => {
      this.#mode = resolved.mode
      return resolved
    })
    return this.#resolved
  }

  async prepare(request: LaunchRequest): Promise<Launch> {
    const resolved = await this.resolve()
    if (resolved.mode === 'none') return unsandboxed(request.env)
    const settings = this.#settings
    // bwrap would start and then fail to exec it: say so as a start failure, as an unsandboxed start would.
    const command = settings.engineCommand.includes('/') ? path.resolve(settings.engineCommand) : onPath(settings.engineCommand)
    if (command === undefined || !executable(command)) {
      throw new ServiceError('ENGINE_START_FAILED', `cannot start ${settings.engineCommand}: not found or not executable`)
    }
    const env: Record<string, string> = { ...request.env, TMPDIR: '/tmp' }
    const readWrite = [request.workDir]
    const home = settings.engineEnv.HOME ?? path.join(settings.stateDir, request.key)
    await mkdir(home, { recursive: true, mode: 0o700 })
    env.HOME = home
    readWrite.push(home)
    const configDir = env.CLAUDE_CONFIG_DIR
    if (configDir !== undefined) {
      await mkdir(configDir, { recursive: true, mode: 0o700 })
      readWrite.push(configDir)
    }
    const readOnly = (request.readOnly ?? []).map((dir) => ({ source: dir, dest: dir }))
    const credentials = await this.#credentials(configDir ?? path.join(home, '.claude'))
    if (credentials) readOnly.push(credentials)

    let gate: { gate: NetGate; dir: string } | undefined
    let forwarderSpec: string | undefined
    if (settings.network === 'allowlist') {
      const targets = allowedTargets(env, settings.networkAllow)
      const dir = await mkdtemp(path.join(os.tmpdir(), 'ar-net-'))
      try {
        gate = {
          dir,
          gate: await NetGate.listen({
            socketPath: path.join(dir, 'net.sock'),
            targets,
            onDenied: (target) => this.#log?.warn({ cli_session_id: request.key, target }, 'sandbox: refused a connection outside engine.network_allow'),
          }),
        }
      } catch (err) {
        await rm(dir, { recursive: true, force: true })
        throw err
      }
      readOnly.push({ source: dir, dest: GATE_DIR_INSIDE })
      const listeners = new Map<string, { host: string; port: number; tunnel?: string }>()
      for (const target of targets.filter((t) => isLoopback(t.host))) {
        const host = target.host === '::1' ? '::1' : target.host.startsWith('127.') ? target.host : '127.0.0.1'
        listeners.set(`${host}|${target.port}`, { host, port: target.port, tunnel: targetKey(target) })
      }
      let proxyPort = PROXY_PORT
      while ([...listeners.values()].some((l) => l.port === proxyPort)) proxyPort++
      listeners.set(`proxy`, { host: '127.0.0.1', port: proxyPort })
      forwarderSpec = JSON.stringify({ gate: `${GATE_DIR_INSIDE}/net.sock`, ready: FORWARDER_READY, listeners: [...listeners.values()] })
      const proxy = `http://127.0.0.1:${proxyPort}`
      Object.assign(env, { HTTPS_PROXY: proxy, https_proxy: proxy, HTTP_PROXY: proxy, http_proxy: proxy, NO_PROXY: 'localhost,127.0.0.1,::1', no_proxy: 'localhost,127.0.0.1,::1' })
    } else {
      // The machine's proxies lead nowhere from a sandbox without network; with `open` they are kept.
      if (settings.network === 'none') for (const name of ['HTTPS_PROXY', 'https_proxy', 'HTTP_PROXY', 'http_proxy']) delete env[name]
    }

    const mounts = planMounts(
      {
        hideBroad: hiddenHomes(),
        reveal: this.#programs,
        hideData: [...settings.hide, settings.stateDir, ...SYSTEM_SECRETS],
        readWrite,
        readOnly,
      },
      pathKind,
    )
    const prefix = bwrapArgs(mounts, settings.network, request.workDir)
    const bwrap = settings.command
    return {
      mode: 'bwrap',
      env,
      // bwrap itself starts in / (it changes into the sandbox directory inside): only the session's own processes work there.
      wrap(command, args) {
        if (forwarderSpec === undefined) return { command: bwrap, args: [...prefix, '--', command, ...args], cwd: '/' }
        return { command: bwrap, args: [...prefix, '--', '/bin/sh', '-c', LAUNCH_WITH_FORWARDER, 'sh', process.execPath, FORWARDER, forwarderSpec, command, ...args], cwd: '/' }
      },
      async dispose() {
        if (!gate) return
        await gate.gate.close().catch(() => {})
        await rm(gate.dir, { recursive: true, force: true })
      },
    }
  }

  /** The user's own CLI login, bound read-only where the session's CLI looks for it (when it is elsewhere). */
  async #credentials(sessionConfigDir: string): Promise<{ source: string; dest: string } | undefined> {
    const sourceDir = process.env.CLAUDE_CONFIG_DIR ?? path.join(os.homedir(), '.claude')
    const source = path.join(sourceDir, '.credentials.json')
    if (pathKind(source) !== 'file' || path.resolve(sourceDir) === path.resolve(sessionConfigDir)) return undefined
    await mkdir(sessionConfigDir, { recursive: true, mode: 0o700 })
    return { source, dest: path.join(sessionConfigDir, '.credentials.json') }
  }
}

/** A launch that runs the CLI as it is (sandbox.mode none): only the environment allowlist applies. */
export function unsandboxed(env: Record<string, string>): Launch {
  return {
    mode: 'none',
    env,
    wrap: (command, args) => ({ command, args: [...args] }),
    dispose: async () => {},
  }
}

/** The service's HOME; and, for a service running as root, every home. */
function hiddenHomes(): string[] {
  const homes = [os.homedir()]
  if (process.getuid?.() === 0) homes.push('/root', '/home')
  return homes
}

function pathKind(p: string): PathKind {
  try {
    return statSync(p).isDirectory() ? 'dir' : 'file'
  } catch {
    return undefined
  }
}

/** The files a CLI start needs: the command (found on PATH) and its real file, file arguments, node, the service's code. */
export function programPaths(command: string, args: readonly string[]): string[] {
  const paths = [CODE_ROOT, process.execPath, ...realOf(process.execPath)]
  const found = command.includes('/') ? path.resolve(command) : onPath(command)
  if (found) paths.push(found, ...realOf(found))
  for (const arg of args) if (path.isAbsolute(arg) && pathKind(arg) !== undefined) paths.push(arg, ...realOf(arg))
  return paths
}

function realOf(p: string): string[] {
  try {
    const real = realpathSync(p)
    return real === p ? [] : [real]
  } catch {
    return []
  }
}

function onPath(command: string): string | undefined {
  for (const dir of (process.env.PATH ?? '').split(':')) {
    if (dir === '') continue
    const candidate = path.join(dir, command)
    if (executable(candidate)) return candidate
  }
  return undefined
}

function executable(file: string): boolean {
  try {
    accessSync(file, constants.X_OK)
    return statSync(file).isFile()
  } catch {
    return false
  }
}
