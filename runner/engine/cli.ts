import { execa, type ResultPromise } from 'execa'
import { ServiceError } from '../../contract/mod.ts'
import { readCliLines, type CliLines } from './cli-lines.ts'
import type { Engine, EngineHandlers, EngineProcess, EngineStartOptions } from './engine.ts'

/** What every engine shares in starting its CLI and asking its version. */

/** A long-lived agent CLI with pipes on its stdio. */
export type CliChild = ResultPromise<{
  stdin: 'pipe'
  stdout: 'pipe'
  stderr: 'pipe'
  buffer: false
  reject: false
  cleanup: false
  detached: true
  extendEnv: false
}> & { pid: number }

/**
 * Starts `command args` as every long-lived engine does: through the session
 * sandbox (`options.wrap`), in its own process group (so the whole group can be
 * signalled), with exactly the environment given, its stdout and stderr read
 * as lines into `lines` (cli-lines.ts). Node knows at once whether the spawn
 * worked: no pid is ENGINE_START_FAILED. A late write to the stdin of a CLI
 * that exited must not crash the service. The child comes wrapped: it is a
 * promise of its own end (after its output was read), which an `await` of it would wait for.
 */
export async function spawnCli(
  command: string,
  args: readonly string[],
  options: Pick<EngineStartOptions, 'wrap' | 'cwd' | 'env'>,
  lines: CliLines,
): Promise<{ child: CliChild }> {
  const line = options.wrap ? options.wrap(command, args) : { command, args: [...args] }
  const child = execa(line.command, line.args, {
    cwd: 'cwd' in line && line.cwd !== undefined ? line.cwd : options.cwd,
    env: options.env,
    extendEnv: false,
    detached: true,
    stdin: 'pipe',
    stdout: 'pipe',
    stderr: 'pipe',
    buffer: false,
    reject: false,
    cleanup: false,
  })
  if (child.pid === undefined) {
    const result = await child
    throw new ServiceError('ENGINE_START_FAILED', `cannot start ${command}: ${result.shortMessage ?? 'unknown failure'}`, { cause: result })
  }
  child.stdin.on('error', () => {})
  void readCliLines(child, lines)
  return { child: child as CliChild }
}

/**
 * A CLI's version, asked once and remembered (the binary does not change under
 * a running service); a failed probe is ENGINE_START_FAILED and is asked again
 * next time.
 */
export class CliVersion {
  readonly #probe: () => Promise<string>
  readonly #failure: (err: Error) => string
  #version: Promise<string> | undefined

  constructor(probe: () => Promise<string>, failure: (err: Error) => string) {
    this.#probe = probe
    this.#failure = failure
  }

  /** `command args --version`, printing the version on stdout (`claude --version`, `codex --version`, …). */
  static of(command: string, args: readonly string[], timeoutMs: number): CliVersion {
    return new CliVersion(
      () => execa(command, [...args, '--version'], { timeout: timeoutMs }).then((result) => result.stdout.trim()),
      (err) => `${command} --version failed: ${err.message}`,
    )
  }

  get(): Promise<string> {
    this.#version ??= this.#probe().catch((err: unknown) => {
      this.#version = undefined
      throw new ServiceError('ENGINE_START_FAILED', this.#failure(err as Error), { cause: err })
    })
    return this.#version
  }
}

/** What every engine shares: its name, its config, and its CLI's version, asked once (CliVersion). */
export abstract class CliEngine<Config> implements Engine {
  readonly name: string
  protected readonly config: Config
  readonly #version: CliVersion

  constructor(name: string, config: Config, version: CliVersion) {
    this.name = name
    this.config = config
    this.#version = version
  }

  version(): Promise<string> {
    return this.#version.get()
  }

  abstract start(options: EngineStartOptions, handlers: EngineHandlers): Promise<EngineProcess>
}
