import { killProcessGroup } from '../../process/terminate.ts'
import { CliEngine, CliVersion, spawnCli } from '../cli.ts'
import type { EngineExit, EngineHandlers, EngineProcess, EngineStartOptions } from '../engine.ts'
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
export class ClaudeEngine extends CliEngine<ClaudeEngineConfig> {
  constructor(config: ClaudeEngineConfig) {
    super('claude', config, CliVersion.of(config.command, config.args, 10_000))
  }

  async start(options: EngineStartOptions, handlers: EngineHandlers): Promise<EngineProcess> {
    // The gate needs the child to write to and the child's output needs the gate: they meet once both exist.
    let onControl: ((message: Obj) => void) | undefined
    let conversationInUse = false
    const { child } = await spawnCli(this.config.command, claudeArgs(this.config, options), options, {
      maxLineBytes: this.config.maxLineBytes,
      onLine: (line) => {
        for (const output of parseClaudeLine(line, onControl)) handlers.onOutput(output)
      },
      onOverlong: (bytes) => handlers.onOverlong(bytes),
      onStderr: (line) => {
        if (isConversationInUse(line)) conversationInUse = true
        handlers.onStderr(line)
      },
    })
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
    // The control protocol carries the WAF's hook and, with a person to ask, the CLI's permission prompts and questions.
    const gate = options.toolGate || options.approver ? new ToolGateSession({ gate: options.toolGate, approver: options.approver }, write, refused) : undefined
    // Prompts and interrupts wait until the CLI took the tool gate: no turn runs in a CLI that would run tools unchecked.
    const command = gate ? (line: string) => gate.afterInitialize(line) : write
    onControl = gate && ((message: Obj) => gate.handle(message))
    // Resolves after stderr ended (execa waits for the streams), so every line was seen.
    const exited: Promise<EngineExit> = child.then((result) => {
      // Nobody reads an answer now: requests still waiting for a person are withdrawn.
      gate?.close()
      return {
        code: result.exitCode ?? null,
        signal: result.signal ?? null,
        ...(conversationInUse && { conversationInUse: true }),
      }
    })
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
