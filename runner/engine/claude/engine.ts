import { killProcessGroup } from '../../process/terminate.ts'
import { CliVersion, spawnCli } from '../cli.ts'
import type { Engine, EngineExit, EngineHandlers, EngineProcess, EngineStartOptions } from '../engine.ts'
import { LineSplitter } from '../line-splitter.ts'
import { TurnPrompts } from '../prompt.ts'
import { claudeArgs, interruptLine, userLine, type ClaudeArgsConfig } from './args.ts'
import type { Obj } from './control.ts'
import { ToolGateSession } from './tool-gate.ts'
import { isConversationInUse, parseClaudeLine } from './parse.ts'

export interface ClaudeEngineConfig extends ClaudeArgsConfig {
  command: string
  /** Longest stdout line kept; longer ones are dropped and reported. */
  maxLineBytes: number
}

/** Claude Code driven headless over stream-json. */
export class ClaudeEngine implements Engine {
  readonly name = 'claude'
  readonly #config: ClaudeEngineConfig
  readonly #version: CliVersion

  constructor(config: ClaudeEngineConfig) {
    this.#config = config
    this.#version = CliVersion.of(config.command, config.args, 10_000)
  }

  version(): Promise<string> {
    return this.#version.get()
  }

  async start(options: EngineStartOptions, handlers: EngineHandlers): Promise<EngineProcess> {
    const { child } = await spawnCli(this.#config.command, claudeArgs(this.#config, options), options)
    const pid = child.pid
    const write = (line: string) => {
      if (child.stdin.writable) child.stdin.write(line)
    }
    // With a tool gate, the CLI asks the runner before every tool call over its own stdin/stdout.
    const refused = (why: string) => {
      handlers.onStderr(`agent-runtime: ${why}`)
      child.stdin.end()
      killProcessGroup(pid)
    }
    const gate = options.toolGate ? new ToolGateSession({ gate: options.toolGate }, write, refused) : undefined
    // Prompts and interrupts wait until the CLI took the tool gate: no turn runs in a CLI that would run tools unchecked.
    const command = gate ? (line: string) => gate.afterInitialize(line) : write
    const onControl = gate && ((message: Obj) => gate.handle(message))
    const onStdoutLines = (lines: string[]) => {
      for (const line of lines) for (const output of parseClaudeLine(line, onControl)) handlers.onOutput(output)
    }
    let conversationInUse = false
    const onStderrLines = (lines: string[]) => {
      for (const line of lines) {
        if (isConversationInUse(line)) conversationInUse = true
        handlers.onStderr(line)
      }
    }
    const stdout = new LineSplitter({ maxLineBytes: this.#config.maxLineBytes, onOverlong: (bytes) => handlers.onOverlong(bytes) })
    const stderr = new LineSplitter({ maxLineBytes: 64 * 1024 })
    child.stdout.on('data', (chunk: Buffer) => onStdoutLines(stdout.push(chunk)))
    child.stdout.on('end', () => onStdoutLines(stdout.end()))
    child.stderr.on('data', (chunk: Buffer) => onStderrLines(stderr.push(chunk)))
    child.stderr.on('end', () => onStderrLines(stderr.end()))
    // Resolves after stderr ended (execa waits for the streams), so every line was seen.
    const exited: Promise<EngineExit> = child.then((result) => ({
      code: result.exitCode ?? null,
      signal: result.signal ?? null,
      ...(conversationInUse && { conversationInUse: true }),
    }))
    const prompts = new TurnPrompts(options.instructions)
    let interrupts = 0
    return {
      pid: child.pid,
      send: (prompt, instructions) => command(userLine(prompts.text(prompt, instructions))),
      interrupt: () => command(interruptLine(`interrupt-${++interrupts}`)),
      endInput: () => child.stdin.end(),
      exited,
    }
  }
}
