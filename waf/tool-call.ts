/**
 * What to inspect in a Claude Code tool call, by tool name (input shapes from
 * @anthropic-ai/claude-code sdk-tools.d.ts). Tools not listed here (MCP tools,
 * future tools) are inspected through their well-known keys: `command`,
 * `file_path`/`notebook_path`/`path` (as both read and write path), `url`,
 * `prompt`. Non-string values are ignored.
 */

/** The kinds of input `inspect` accepts; `command_text` is a view of `command`, not an input. */
export const WAF_INPUTS = ['prompt', 'command', 'read_path', 'write_path', 'url', 'content'] as const
export type WafInput = (typeof WAF_INPUTS)[number]

export interface ToolField {
  input: WafInput
  /** Where in the tool input the text came from, e.g. `command`, `edits[2].new_string`. */
  field: string
  text: string
}

type Extractor = (input: Record<string, unknown>) => ToolField[]

const field = (input: WafInput, name: string, value: unknown): ToolField[] => (typeof value === 'string' ? [{ input, field: name, text: value }] : [])

const TOOLS: Record<string, Extractor> = {
  Bash: (i) => field('command', 'command', i.command),
  Monitor: (i) => [...field('command', 'command', i.command), ...field('url', 'ws.url', (i.ws as Record<string, unknown> | undefined)?.url)],
  Write: (i) => [...field('write_path', 'file_path', i.file_path), ...field('content', 'content', i.content)],
  Edit: (i) => [...field('write_path', 'file_path', i.file_path), ...field('content', 'new_string', i.new_string)],
  MultiEdit: (i) => [
    ...field('write_path', 'file_path', i.file_path),
    ...(Array.isArray(i.edits) ? i.edits.flatMap((e, n) => field('content', `edits[${n}].new_string`, (e as Record<string, unknown> | null)?.new_string)) : []),
  ],
  NotebookEdit: (i) => [
    ...field('write_path', 'notebook_path', i.notebook_path),
    ...field('write_path', 'file_path', i.file_path),
    ...field('content', 'new_source', i.new_source),
  ],
  Read: (i) => field('read_path', 'file_path', i.file_path),
  Grep: (i) => field('read_path', 'path', i.path),
  Glob: (i) => field('read_path', 'path', i.path),
  LS: (i) => field('read_path', 'path', i.path),
  WebFetch: (i) => field('url', 'url', i.url),
  Agent: (i) => field('prompt', 'prompt', i.prompt),
  Task: (i) => field('prompt', 'prompt', i.prompt),
  CronCreate: (i) => field('prompt', 'prompt', i.prompt),
}

function generic(i: Record<string, unknown>): ToolField[] {
  return [
    ...field('command', 'command', i.command),
    ...['file_path', 'notebook_path', 'path'].flatMap((k) => [...field('read_path', k, i[k]), ...field('write_path', k, i[k])]),
    ...field('url', 'url', i.url),
    ...field('prompt', 'prompt', i.prompt),
  ]
}

/** The texts of a tool call to inspect, each with the kind of input it is. */
export function toolCallFields(toolName: string, input: unknown): ToolField[] {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) return []
  const extract = Object.hasOwn(TOOLS, toolName) ? TOOLS[toolName]! : generic
  return extract(input as Record<string, unknown>)
}
