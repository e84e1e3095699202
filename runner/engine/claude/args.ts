import type { EngineStartOptions } from '../engine.ts'
import { startInstructions } from '../prompt.ts'

/** The parts of the engine config that shape the CLI's command line. */
export interface ClaudeArgsConfig {
  args: readonly string[]
  permission_mode: string
  allowed_tools: readonly string[]
  disallowed_tools: readonly string[]
  model?: string | undefined
  /** `--include-partial-messages` (unless false): the CLI prints the model's text as it comes (token deltas). */
  partial_messages?: boolean | undefined
}

/**
 * The command line of a long-lived headless Claude Code process: stream-json
 * in and out, one conversation id, permissions and tools from config.
 */
export function claudeArgs(config: ClaudeArgsConfig, options: Pick<EngineStartOptions, 'cliSessionId' | 'resume' | 'instructions' | 'approver'>): string[] {
  const args = [
    ...config.args,
    '-p',
    '--input-format',
    'stream-json',
    '--output-format',
    'stream-json',
    '--verbose',
    ...(config.partial_messages === false ? [] : ['--include-partial-messages']),
    options.resume ? '--resume' : '--session-id',
    options.cliSessionId,
  ]
  // The tool lists are variadic flags: each is followed by a plain flag so they swallow nothing else.
  if (config.allowed_tools.length > 0) args.push('--allowedTools', ...config.allowed_tools)
  if (config.disallowed_tools.length > 0) args.push('--disallowedTools', ...config.disallowed_tools)
  // With a person to ask, the CLI asks on its control protocol (can_use_tool) in a mode that asks at all:
  // bypassPermissions would ask nothing, so it becomes default (asks before commands and edits).
  if (options.approver) args.push('--permission-prompt-tool', 'stdio')
  args.push('--permission-mode', options.approver && config.permission_mode === 'bypassPermissions' ? 'default' : config.permission_mode)
  if (config.model !== undefined) args.push('--model', config.model)
  const instructions = startInstructions(options)
  if (instructions) args.push('--append-system-prompt', instructions)
  return args
}

/** One user turn as a stream-json stdin line. */
export function userLine(prompt: string): string {
  return JSON.stringify({ type: 'user', message: { role: 'user', content: prompt } }) + '\n'
}

/** The CLI's interrupt request as a stdin line. */
export function interruptLine(requestId: string): string {
  return JSON.stringify({ type: 'control_request', request_id: requestId, request: { subtype: 'interrupt' } }) + '\n'
}
