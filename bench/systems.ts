import { spawn, type ChildProcess } from 'node:child_process'
import { chmod, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { createConnection, createServer } from 'node:net'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { startServiceProcess, type ServiceProcess } from '../test/fixtures/service-process.ts'
import { onlyLoopback } from './private-network.ts'

/** A relay under measurement: separate processes, reached over a WebSocket on loopback. */
export interface System {
  name: string
  wsUrl: string
  /** The wire protocol its clients speak. */
  protocol: 'native' | 'hotplex'
  /** Every process of the service (not the CLIs): its CPU is the service's CPU. */
  pids: number[]
  /** The process that holds the client connections (RSS after the load). */
  gatewayPid: number
  /** The process that holds the sessions' CLIs, when it is another one. */
  runnerPid?: number
  stop(): Promise<void>
}

export interface Cli {
  command: string
  args: string[]
}

export const FAKE_CLI: Cli = { command: process.execPath, args: [fileURLToPath(new URL('../test/fakes/fake-claude.ts', import.meta.url))] }
export const TINY_CLI: Cli = { command: fileURLToPath(new URL('../test/fakes/tiny-claude.sh', import.meta.url)), args: [] }
const FLOOR = fileURLToPath(new URL('./floor.ts', import.meta.url))
/** A HotPlex v0.10.0 binary (not built or shipped by this project). */
export const HOTPLEX_BIN = process.env.HOTPLEX_BIN ?? fileURLToPath(new URL('../.tools/hotplex/hotplexd', import.meta.url))
const NATS_SERVER_BIN = process.env.NATS_SERVER_BIN ?? '/usr/sbin/nats-server'

/** The bare floor (bench/floor.ts) relaying `cli`. */
export async function startFloor(cli: Cli): Promise<System> {
  const child = spawn(process.execPath, [FLOOR, cli.command, ...cli.args], { stdio: ['ignore', 'pipe', 'inherit'] })
  const port = await new Promise<number>((resolve, reject) => {
    child.stdout!.once('data', (chunk: Buffer) => resolve(Number(/listening (\d+)/.exec(chunk.toString())?.[1])))
    child.once('exit', (code) => reject(new Error(`the floor exited with ${code}`)))
  })
  return { name: 'bare floor', wsUrl: `ws://127.0.0.1:${port}`, protocol: 'native', pids: [child.pid!], gatewayPid: child.pid!, stop: () => terminate(child) }
}

/** Ours in dev mode: one process, in-process bus, state in memory. */
export async function startDev(dir: string, cli: Cli, extra: Record<string, unknown> = {}): Promise<System> {
  const service = await startServiceProcess('dev', await ourConfig(dir, 'dev', cli, 'dev', extra), dir)
  const pid = service.child.pid!
  return { name: 'ours (dev)', wsUrl: wsUrl(service), protocol: 'native', pids: [pid], gatewayPid: pid, stop: () => stopAll([service]) }
}

/** Ours in production: a gateway and a runner over a private nats-server with JetStream. */
export async function startProduction(dir: string, cli: Cli, extra: Record<string, unknown> = {}): Promise<System> {
  const nats = await startNatsServer(dir)
  try {
    const config = await ourConfig(dir, 'prod', cli, nats.url, { state: { backend: 'jetstream' }, ...extra })
    const runner = await startServiceProcess('runner', config, dir)
    const gateway = await startServiceProcess('gateway', config, dir)
    return {
      name: 'ours (production)',
      wsUrl: wsUrl(gateway),
      protocol: 'native',
      pids: [gateway.child.pid!, runner.child.pid!, nats.child.pid!],
      gatewayPid: gateway.child.pid!,
      runnerPid: runner.child.pid!,
      stop: async () => {
        await stopAll([gateway, runner])
        await terminate(nats.child)
      },
    }
  } catch (err) {
    await terminate(nats.child)
    throw err
  }
}

/**
 * HotPlex v0.10.0 with `claude` on its PATH pointing at `cli`. It listens on every
 * interface, so it is started only where loopback is the only one.
 */
export async function startHotPlex(dir: string, cli: Cli): Promise<System> {
  if (!onlyLoopback()) throw new Error('HotPlex listens on every interface: start it only in a network namespace with loopback only')
  const bin = path.join(dir, 'hotplex-bin')
  await mkdir(bin, { recursive: true })
  await writeFile(path.join(bin, 'claude'), `#!/bin/sh\nexec ${[cli.command, ...cli.args].map((part) => `'${part}'`).join(' ')} "$@"\n`)
  await chmod(path.join(bin, 'claude'), 0o755)
  const port = await freePort()
  const home = path.join(dir, 'hotplex-home')
  await mkdir(home, { recursive: true })
  const child = spawn(HOTPLEX_BIN, [], {
    cwd: home,
    env: { ...process.env, PATH: `${bin}:${process.env.PATH}`, PORT: String(port), HOME: home, CLAUDE_CONFIG_DIR: path.join(home, 'claude') },
    stdio: ['ignore', 'ignore', 'ignore'],
  })
  await waitForPort(port, child)
  return {
    name: 'HotPlex v0.10.0',
    wsUrl: `ws://127.0.0.1:${port}/ws/v1/agent`,
    protocol: 'hotplex',
    pids: [child.pid!],
    gatewayPid: child.pid!,
    stop: () => terminate(child),
  }
}

let configs = 0

async function ourConfig(dir: string, name: string, cli: Cli, natsUrl: string, extra: Record<string, unknown>): Promise<Record<string, unknown>> {
  const run = `${name}${configs++}`
  const { engine, ...rest } = extra as { engine?: Record<string, unknown> }
  return {
    server: { host: '127.0.0.1', port: 0 },
    // Each system its own CLI store: the same session name makes the same CLI session id, which one store holds once.
    engine: {
      command: cli.command,
      args: cli.args,
      ...engine,
      env: { CLAUDE_CONFIG_DIR: path.join(dir, `${run}-claude`), ...(engine?.env as Record<string, string> | undefined) },
    },
    session: { work_dir: path.join(dir, `${run}-sessions`), marker_dir: path.join(dir, `${run}-markers`) },
    runner: { max_sessions: 5_000 },
    limits: { max_connections_per_ip: 5_000 },
    ...(natsUrl !== 'dev' && { nats: { url: natsUrl, prefix: `bench-${process.pid}-${run}` } }),
    // info: the start-up line tells the harness the process is ready; nothing logs per event.
    log: { level: 'info' },
    ...rest,
  }
}

function wsUrl(service: ServiceProcess): string {
  return `${service.address!.replace('http', 'ws')}/ws/v1/agent`
}

async function stopAll(services: ServiceProcess[]): Promise<void> {
  await Promise.all(services.map((service) => service.stop()))
}

/** A nats-server of this run only (JetStream on, its store in `dir`), on a free loopback port. */
async function startNatsServer(dir: string): Promise<{ url: string; child: ChildProcess }> {
  const port = await freePort()
  const store = await mkdtemp(path.join(dir, 'nats-'))
  const child = spawn(NATS_SERVER_BIN, ['-a', '127.0.0.1', '-p', String(port), '-js', '-sd', store], { stdio: ['ignore', 'ignore', 'ignore'] })
  await waitForPort(port, child)
  child.once('exit', () => void rm(store, { recursive: true, force: true }))
  return { url: `nats://127.0.0.1:${port}`, child }
}

async function terminate(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return
  const exited = new Promise((resolve) => child.once('exit', resolve))
  child.kill('SIGTERM')
  const timer = setTimeout(() => child.kill('SIGKILL'), 5_000)
  await exited
  clearTimeout(timer)
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer()
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number }
      server.close(() => resolve(port))
    })
  })
}

async function waitForPort(port: number, child: ChildProcess): Promise<void> {
  const deadline = Date.now() + 10_000
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`process exited with ${child.exitCode} before listening on ${port}`)
    if (await connects(port)) return
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  throw new Error(`nothing listened on ${port} within 10 s`)
}

function connects(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ port, host: '127.0.0.1' })
    socket.once('connect', () => {
      socket.destroy()
      resolve(true)
    })
    socket.once('error', () => resolve(false))
  })
}
