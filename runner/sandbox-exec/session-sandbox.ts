import { accessSync, constants, realpathSync, statSync } from 'node:fs'
import { mkdir, mkdtemp, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import type { Logger } from 'pino'
import { ServiceError } from '../../contract/mod.ts'
import { bwrapArgs, planMounts, type PathKind } from './bwrap-args.ts'
import type { EngineNetwork, SandboxForwarder, SandboxMode } from './config.ts'
import { allowedTargets, isLoopback, type NetTarget } from './net-allow.ts'
import { NetGate } from './net-gate.ts'
import { probeBwrap } from './probe.ts'

/** The service's code (the forwarder, a fake CLI in tests): kept visible even under a hidden HOME. */
const CODE_ROOT = fileURLToPath(new URL('../..', import.meta.url)).replace(/\/$/, '')
const FORWARDER = fileURLToPath(new URL('./forwarder.mjs', import.meta.url))
/** Where the network gate's directory appears inside a sandbox (under its private /run). */
export const GATE_DIR_INSIDE = '/run/agent-runtime'
/** Where the engine's control directory appears inside a sandbox: read-only, so nothing the agent runs can replace what the runner put there. */
export const CONTROL_DIR_INSIDE = '/run/agent-runtime-control'
/** The proxy port inside the sandbox that HTTPS_PROXY names (moved up if a forwarded model API uses it). */
const PROXY_PORT = 3128
/** Files of the system no session needs, hidden even from a service running as root. */
const SYSTEM_SECRETS = ['/etc/shadow', '/etc/gshadow', '/etc/shadow-', '/etc/gshadow-', '/etc/sudoers']

/**
 * Starts the forwarders in the background, waits until the sandbox's network
 * namespace has as many TCP sockets in use as there are listeners (nothing
 * else runs there yet, and a listener counts once it listens), then becomes
 * the CLI. It reads /proc/net/sockstat with shell builtins: a fork costs a few
 * ms here, and reading /proc/net/tcp byte by byte (as `read` does) about 10 ms
 * a pass. It spins first (socat listens within a few ms), then sleeps between
 * tries, and gives up after about 5 s.
 * `$1` listeners to wait for, `$2` forwarder processes, then three words for each, then the CLI.
 */
export const LAUNCH_WITH_FORWARDER = [
  'want=$1 count=$2; shift 2',
  'while [ "$count" -gt 0 ]; do',
  '  (cd / && exec "$1" "$2" "$3" </dev/null >/dev/null) &',
  '  shift 3; count=$((count-1))',
  'done',
  'i=0',
  'while :; do',
  '  up=0',
  '  for table in /proc/net/sockstat /proc/net/sockstat6; do',
  '    [ -r "$table" ] || continue',
  '    while read -r proto _ inuse _; do',
  '      if [ "$proto" = TCP: ] || [ "$proto" = TCP6: ]; then up=$((up+inuse)); fi',
  '    done <"$table"',
  '  done',
  '  [ "$up" -ge "$want" ] && break',
  '  i=$((i+1))',
  '  if [ "$i" -gt 2500 ]; then echo "agent-runtime sandbox: the network forwarder did not start" >&2; exit 1; fi',
  '  if [ "$i" -gt 2000 ]; then sleep 0.01; fi',
  'done',
  'exec "$@"',
].join('\n')

export interface SandboxSettings {
  /** `sandbox.mode` as configured. */
  mode: SandboxMode
  /** `sandbox.forwarder` as configured. */
  forwarder: SandboxForwarder
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
  /**
   * A directory of the runner's that the CLI may read but not change (read-only
   * in the sandbox): where an engine puts the sockets its CLI's hooks call back
   * on. `host` is the runner's path, `inside` the CLI's.
   */
  readonly controlDir: { host: string; inside: string }
  /** Closes what the sandbox needed beside the CLI (the network gate, the control directory); after the CLI exited. */
  dispose(): Promise<void>
}

export interface LaunchRequest {
  /** Names the session's CLI state directory (the CLI conversation id: stable, file-name safe). */
  key: string
  /** The session's sandbox directory (read-write, the CLI's cwd). */
  workDir: string
  /** The CLI's environment from runner/process/env.ts. */
  env: Record<string, string>
}

/** What relays the sandbox's loopback to its network gate (`engine.network: allowlist`). */
type Forwarder = { kind: 'socat'; path: string } | { kind: 'node' }

export type ResolvedSandbox = { mode: 'bwrap'; forwarder?: Forwarder['kind'] } | { mode: 'none'; reason: string }

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
  #forwarder: Forwarder = { kind: 'node' }

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

  /** Probes bwrap once (`auto`, `bwrap`); `bwrap` that does not work here is an error, and so is `sandbox.forwarder: socat` without socat. */
  resolve(): Promise<ResolvedSandbox> {
    this.#resolved ??= (async (): Promise<ResolvedSandbox> => {
      const { mode, command, network } = this.#settings
      if (mode === 'none') return { mode: 'none', reason: 'sandbox.mode is none' }
      const probe = await probeBwrap(command)
      if (probe.ok) {
        if (network !== 'allowlist') return { mode: 'bwrap' }
        this.#forwarder = this.#pickForwarder()
        return { mode: 'bwrap', forwarder: this.#forwarder.kind }
      }
      if (mode === 'bwrap') throw new Error(`sandbox.mode is bwrap, but bubblewrap cannot make a sandbox here: ${probe.reason}`)
      return { mode: 'none', reason: probe.reason }
    })().then((resolved) => {
      this.#mode = resolved.mode
      return resolved
    })
    return this.#resolved
  }

  #pickForwarder(): Forwarder {
    const choice = this.#settings.forwarder
    if (choice === 'node') return { kind: 'node' }
    const socat = onPath('socat')
    if (socat) return { kind: 'socat', path: socat }
    if (choice === 'socat') throw new Error('sandbox.forwarder is socat, but socat is not on PATH (Debian: apt-get install socat)')
    return { kind: 'node' }
  }

  async prepare(request: LaunchRequest): Promise<Launch> {
    const resolved = await this.resolve()
    // Short, for Unix socket paths (108 bytes at most).
    const control = await mkdtemp(path.join(os.tmpdir(), 'ar-ctl-'))
    if (resolved.mode === 'none') return unsandboxed(request.env, control)
    try {
      return await this.#sandboxed(request, control)
    } catch (err) {
      await rm(control, { recursive: true, force: true })
      throw err
    }
  }

  async #sandboxed(request: LaunchRequest, control: string): Promise<Launch> {
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
    const readOnly: { source: string; dest: string }[] = [{ source: control, dest: CONTROL_DIR_INSIDE }]
    const credentials = await this.#credentials(configDir ?? path.join(home, '.claude'))
    if (credentials) readOnly.push(credentials)

    let gate: { gate: NetGate; dir: string } | undefined
    let forwarding: string[] | undefined
    if (settings.network === 'allowlist') {
      const targets = allowedTargets(env, settings.networkAllow)
      // A model API on the host's loopback is reached at its own address inside: a listener there, tunnelled to it.
      const listeners = new Map<string, Listener>()
      const tunnels: { socketPath: string; target: NetTarget }[] = []
      for (const target of targets.filter((t) => isLoopback(t.host))) {
        const host = target.host === '::1' ? '::1' : target.host.startsWith('127.') ? target.host : '127.0.0.1'
        const key = `${host}|${target.port}`
        if (listeners.has(key)) continue
        const socket = `tunnel-${listeners.size}.sock`
        listeners.set(key, { host, port: target.port, socket: `${GATE_DIR_INSIDE}/${socket}` })
        tunnels.push({ socketPath: socket, target })
      }
      let proxyPort = PROXY_PORT
      while ([...listeners.values()].some((l) => l.port === proxyPort)) proxyPort++
      listeners.set('proxy', { host: '127.0.0.1', port: proxyPort, socket: `${GATE_DIR_INSIDE}/proxy.sock` })
      const dir = await mkdtemp(path.join(os.tmpdir(), 'ar-net-'))
      try {
        gate = {
          dir,
          gate: await NetGate.listen({
            socketPath: path.join(dir, 'proxy.sock'),
            targets,
            tunnels: tunnels.map((t) => ({ ...t, socketPath: path.join(dir, t.socketPath) })),
            onDenied: (target) => this.#log?.warn({ cli_session_id: request.key, target }, 'sandbox: refused a connection outside engine.network_allow'),
          }),
        }
      } catch (err) {
        await rm(dir, { recursive: true, force: true })
        throw err
      }
      readOnly.push({ source: dir, dest: GATE_DIR_INSIDE })
      forwarding = forwarderArgs(this.#forwarder, [...listeners.values()])
      const proxy = `http://127.0.0.1:${proxyPort}`
      Object.assign(env, {
        HTTPS_PROXY: proxy,
        https_proxy: proxy,
        HTTP_PROXY: proxy,
        http_proxy: proxy,
        NO_PROXY: 'localhost,127.0.0.1,::1',
        no_proxy: 'localhost,127.0.0.1,::1',
      })
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
        if (forwarding === undefined) return { command: bwrap, args: [...prefix, '--', command, ...args], cwd: '/' }
        return { command: bwrap, args: [...prefix, '--', '/bin/sh', '-c', LAUNCH_WITH_FORWARDER, 'sh', ...forwarding, command, ...args], cwd: '/' }
      },
      controlDir: { host: control, inside: CONTROL_DIR_INSIDE },
      async dispose() {
        await rm(control, { recursive: true, force: true })
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

/** A TCP listener on the sandbox's loopback and the gate socket (inside) it relays to. */
interface Listener {
  host: string
  port: number
  socket: string
}

/**
 * The launcher's forwarder arguments: how many listeners to wait for, how
 * many processes, and three words for each (socat: one per listener;
 * node: one for all, its listeners as JSON).
 */
export function forwarderArgs(forwarder: Forwarder, listeners: readonly Listener[]): string[] {
  if (forwarder.kind === 'node') return [String(listeners.length), '1', process.execPath, FORWARDER, JSON.stringify(listeners)]
  const processes = listeners.flatMap(({ host, port, socket }) => {
    const listen = host.includes(':') ? `TCP6-LISTEN:${port},bind=[${host}],fork,reuseaddr` : `TCP4-LISTEN:${port},bind=${host},fork,reuseaddr`
    return [forwarder.path, listen, `UNIX-CONNECT:${socket}`]
  })
  return [String(listeners.length), String(listeners.length), ...processes]
}

/** A launch that runs the CLI as it is (sandbox.mode none): only the environment allowlist applies. */
export function unsandboxed(env: Record<string, string>, control: string): Launch {
  return {
    mode: 'none',
    env,
    wrap: (command, args) => ({ command, args: [...args] }),
    controlDir: { host: control, inside: control },
    dispose: () => rm(control, { recursive: true, force: true }),
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
