#!/usr/bin/env -S node --max-semi-space-size=4
import { createInterface } from 'node:readline/promises'
import { parseArgs } from 'node:util'
import { CLIENT_USAGE, clientCommand } from '../client/cli/commands.ts'
import { SERVICE_VERSION } from '../contract/version.ts'
import { secretsOf } from '../observability/mod.ts'
import { ConfigError, loadConfig } from '../service/config/mod.ts'
import { createLogger } from '../service/logger.ts'
import { startService, type Mode } from '../service/start.ts'

const USAGE = `usage: agent-runtime [dev|gateway|runner|controller] [--config <file>] [--version]

  dev       gateway, in-process bus and a local runner in one process (default)
  gateway   client surfaces only; reaches runners over NATS (nats.url / NATS_URL)
  runner    runs agent CLIs for sessions; takes commands over NATS
  controller  keeps sandbox pods in Kubernetes (warm pool, one pod per session)

${CLIENT_USAGE}`

const MODES = new Set<Mode>(['dev', 'gateway', 'runner', 'controller'])
/** A crashed process exits after this even if ending its sessions hangs. */
const CRASH_EXIT_MS = 15_000

async function main(argv: string[]): Promise<number> {
  // The client commands talk to a running service; they read no service config.
  if (argv[0] === 'run' || argv[0] === 'attach') return clientCommand(argv[0], argv.slice(1), clientIo())
  let parsed
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      options: { config: { type: 'string', short: 'c' }, version: { type: 'boolean', short: 'v' }, help: { type: 'boolean', short: 'h' } },
    })
  } catch (err) {
    console.error(`agent-runtime: ${(err as Error).message}\n${USAGE}`)
    return 2
  }
  const { values, positionals } = parsed
  if (values.version) {
    console.log(SERVICE_VERSION)
    return 0
  }
  if (values.help) {
    console.log(USAGE)
    return 0
  }
  const mode = (positionals[0] ?? 'dev') as Mode
  if (!MODES.has(mode) || positionals.length > 1) {
    console.error(`agent-runtime: unknown command "${positionals.join(' ')}"\n${USAGE}`)
    return 2
  }

  let config
  try {
    config = await loadConfig(values.config)
  } catch (err) {
    if (err instanceof ConfigError) {
      console.error(err.message)
      return err.exitCode
    }
    throw err
  }
  // Every configured secret is scrubbed from the log lines (observability/redact.ts).
  const log = createLogger(config.log.level, config.namespace, secretsOf(config, process.env))
  let service
  try {
    service = await startService(mode, config, log, { configFile: values.config })
  } catch (err) {
    log.error({ err }, 'agent runtime failed to start')
    return 1
  }
  // The first SIGTERM/SIGINT drains (running turns get server.shutdown_grace); a second one cuts the grace short.
  const hurry = new AbortController()
  let stopping = false
  const stop = async (signal: string) => {
    if (stopping) {
      log.warn({ signal }, 'second signal: stopping the running sessions now')
      hurry.abort()
      return
    }
    stopping = true
    log.info({ signal }, 'stopping')
    try {
      await (service.shutdown ? service.shutdown(hurry.signal) : service.stop())
    } catch (err) {
      log.error({ err }, 'shutdown failed')
      await service.stop().catch(() => {})
    }
    process.exit(0)
  }
  process.on('SIGTERM', () => void stop('SIGTERM'))
  process.on('SIGINT', () => void stop('SIGINT'))
  // A bug must not leave agents running unsupervised: say why at fatal, end every session, exit 1.
  let crashed = false
  const crash = (err: unknown, origin: string) => {
    if (crashed) return
    crashed = true
    log.fatal({ err, origin }, 'crashed: ending every session, then exiting')
    hurry.abort()
    setTimeout(() => process.exit(1), CRASH_EXIT_MS).unref()
    void service
      .stop()
      .catch(() => {})
      .finally(() => process.exit(1))
  }
  process.on('uncaughtException', (err) => crash(err, 'uncaughtException'))
  process.on('unhandledRejection', (reason) => crash(reason, 'unhandledRejection'))
  return -1 // keep running
}

function clientIo() {
  return {
    env: process.env,
    out: (text: string) => void process.stdout.write(text),
    err: (text: string) => void process.stderr.write(text),
    // Steering asks on the terminal only when there is one to read from.
    ask: process.stdin.isTTY ? askLine : undefined,
    onInterrupt(handler: () => void) {
      process.on('SIGINT', handler)
      return () => void process.off('SIGINT', handler)
    },
  }
}

async function askLine(prompt: string, signal: AbortSignal): Promise<string> {
  const terminal = createInterface({ input: process.stdin, output: process.stderr })
  try {
    return await terminal.question(prompt, { signal })
  } finally {
    terminal.close()
  }
}

const code = await main(process.argv.slice(2))
if (code >= 0) process.exit(code)
