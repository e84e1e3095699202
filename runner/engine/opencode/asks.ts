/**
 * Which OpenCode tool calls a person is asked about under `approval: ask`.
 * `opencode run` cannot put its own permission asks to anyone (it rejects
 * each one itself, and 1.18.33 calls no plugin hook for them: recorded in
 * test/fakes/recordings/opencode-1.18.33/permission-ask.json), so the engine
 * asks from the gate plugin instead, for the calls that change something or
 * reach out, as an OpenCode configuration of `ask` for those tools would:
 * the shell, file edits, the web, subagents, and any tool it does not know
 * (an MCP server's or a plugin's, which may do anything). Reading and
 * searching, the todo list, skills, LSP look-ups and the agent's own
 * bookkeeping run without asking, as on Claude Code; so does `question`
 * (asking whether the agent may ask would be no answer to its question).
 */
const RUN_WITHOUT_ASKING = new Set(['read', 'glob', 'grep', 'list', 'todoread', 'todowrite', 'skill', 'lsp', 'question', 'invalid', 'plan_exit', 'plan_enter'])

/** Whether a call of this OpenCode tool goes to a person before it runs. */
export function asksPerson(tool: string): boolean {
  return !RUN_WITHOUT_ASKING.has(tool)
}
