import path from 'node:path'
import type { ToolCall } from '../../../waf/mod.ts'

/**
 * OpenCode's tools (1.18.33: bash, edit, write, read, glob, grep, webfetch,
 * task, …) as the tool calls the WAF's rules know (waf/tool-call.ts
 * reads Claude Code's names and input keys): the name Claude Code gives the
 * same tool and the inputs renamed (`filePath` → `file_path`, `newString` →
 * `new_string`). A tool not listed keeps its name and input: the WAF reads
 * its well-known keys (`command`, `path`, `url`, `prompt`).
 */
const TOOLS: Record<string, { name: string; input: (args: Record<string, unknown>) => Record<string, unknown> }> = {
  bash: { name: 'Bash', input: (a) => ({ command: a.command, description: a.description }) },
  write: { name: 'Write', input: (a) => ({ file_path: a.filePath, content: a.content }) },
  edit: { name: 'Edit', input: (a) => ({ file_path: a.filePath, old_string: a.oldString, new_string: a.newString }) },
  read: { name: 'Read', input: (a) => ({ file_path: a.filePath }) },
  glob: { name: 'Glob', input: (a) => ({ pattern: a.pattern, path: a.path }) },
  grep: { name: 'Grep', input: (a) => ({ pattern: a.pattern, path: a.path }) },
  list: { name: 'LS', input: (a) => ({ path: a.path }) },
  webfetch: { name: 'WebFetch', input: (a) => ({ url: a.url }) },
  task: { name: 'Task', input: (a) => ({ prompt: a.prompt, description: a.description }) },
}

/** The WAF's view of one OpenCode tool call. */
export function wafToolCall(tool: string, args: unknown, callId: string | undefined, cwd: string): ToolCall {
  const known = Object.hasOwn(TOOLS, tool) ? TOOLS[tool] : undefined
  const isObject = typeof args === 'object' && args !== null && !Array.isArray(args)
  const input = known && isObject ? known.input(args as Record<string, unknown>) : args
  // bash may run elsewhere (`workdir`): globs in its command expand from there.
  const workdir = isObject ? (args as Record<string, unknown>).workdir : undefined
  const from = typeof workdir === 'string' ? path.resolve(cwd, workdir) : cwd
  return { toolName: known?.name ?? tool, input, cwd: from, ...(callId !== undefined && { toolUseId: callId }) }
}
