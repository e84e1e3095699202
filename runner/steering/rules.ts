import type { ToolCall } from '../../waf/mod.ts'

/**
 * Approval rules: `Tool` or `Tool(pattern)`, as Claude Code writes its own
 * permission rules (`Bash(git status*)`, `Edit(src/**)`, `Bash(npm run test:*)`).
 * Pure. Tool names are the ones the WAF sees (every engine maps its tools to
 * Claude Code's names, waf/tool-call.ts). A pattern is matched against the
 * call's subject: the command of a shell tool, the path of a file tool
 * (relative to the CLI's working directory when inside it), the URL of a
 * fetch, else the input as JSON text.
 */
export interface ApprovalRule {
  /** The rule as written, for reports (`permission_resolved` with source `rule`). */
  text: string
  tool: string
  /** None: every call of the tool. */
  pattern?: string
  /** The pattern is this one call's subject, to be matched as it is (an "allow always" of a call with no suggestion). */
  exact?: true
}

const RULE = /^([A-Za-z_][\w.-]*|\*)(?:\((.*)\))?$/s

/** Parses one rule; throws an Error saying what is wrong (the config loader names the key). */
export function parseApprovalRule(text: string): ApprovalRule {
  const match = RULE.exec(text.trim())
  if (!match)
    throw new Error(`"${text}" is not an approval rule: write a tool name, optionally with a pattern in parentheses, e.g. Bash(git status*) or Edit(src/**)`)
  const [, tool, pattern] = match
  if (pattern === '') throw new Error(`"${text}" has an empty pattern: leave out the parentheses to match every call of ${tool}`)
  return pattern === undefined ? { text: text.trim(), tool: tool! } : { text: text.trim(), tool: tool!, pattern }
}

const SHELL_TOOLS = new Set(['Bash', 'Monitor'])
const PATH_KEYS = ['file_path', 'notebook_path', 'path'] as const

/** What a pattern is matched against, and whether it is a path (where `*` stops at `/`). */
export function subjectOf(call: ToolCall): { text: string; kind: 'command' | 'path' | 'url' | 'input' } {
  const input = isObj(call.input) ? call.input : {}
  if (SHELL_TOOLS.has(call.toolName) && typeof input.command === 'string') return { text: input.command, kind: 'command' }
  for (const key of PATH_KEYS) {
    const value = input[key]
    if (typeof value === 'string') return { text: relativeTo(call.cwd, value), kind: 'path' }
  }
  if (typeof input.url === 'string') return { text: input.url, kind: 'url' }
  return { text: JSON.stringify(call.input ?? null), kind: 'input' }
}

/**
 * Whether an allow rule lets the call through. A shell command with more than
 * one command in it (`;`, `&&`, `|`, `$(…)`, backquotes, redirections, a
 * newline) is never allowed by a pattern: `Bash(git status*)` must not allow
 * `git status; rm -rf ~`. Such a call goes to a person.
 */
export function allows(rule: ApprovalRule, call: ToolCall): boolean {
  if (!toolMatches(rule.tool, call.toolName)) return false
  if (rule.pattern === undefined) return true
  const subject = subjectOf(call)
  if (rule.exact) return subject.text === rule.pattern
  if (subject.kind === 'command' && isCompound(subject.text)) return false
  return patternMatches(rule.pattern, subject)
}

/**
 * Whether a deny rule stops the call: the whole subject or, for a shell
 * command, any one of the commands in it (`cd x && rm -rf y` is caught by
 * `Bash(rm *)`).
 */
export function denies(rule: ApprovalRule, call: ToolCall): boolean {
  if (!toolMatches(rule.tool, call.toolName)) return false
  if (rule.pattern === undefined) return true
  const subject = subjectOf(call)
  if (patternMatches(rule.pattern, subject)) return true
  return subject.kind === 'command' && commandParts(subject.text).some((part) => patternMatches(rule.pattern!, { text: part, kind: 'command' }))
}

/**
 * The rule an "allow always" answer adds for the rest of the session: the
 * engine's own suggestion when it made one (Claude Code's
 * `permission_suggestions` addRules, e.g. a command prefix), else exactly this
 * call (its subject with the pattern's wildcards escaped).
 */
export function alwaysRule(call: ToolCall, suggestion?: { toolName: string; ruleContent?: string }): ApprovalRule {
  if (suggestion && suggestion.toolName === call.toolName) {
    const text =
      suggestion.ruleContent === undefined || suggestion.ruleContent === '' ? suggestion.toolName : `${suggestion.toolName}(${suggestion.ruleContent})`
    try {
      return parseApprovalRule(text)
    } catch {
      // A suggestion we cannot read: fall back to exactly this call.
    }
  }
  const pattern = subjectOf(call).text
  return { text: `${call.toolName}(${escapePattern(pattern)})`, tool: call.toolName, pattern, exact: true }
}

function toolMatches(ruleTool: string, toolName: string): boolean {
  return ruleTool === '*' || ruleTool === toolName
}

/**
 * `:*` at the end is a prefix (Claude Code's form); otherwise a glob over the
 * whole subject: `*` any run of characters (in a path, not `/`), `**` any run
 * at all, `?` one character, `\` makes the next character plain. A command
 * pattern ending in ` *` also matches the command without arguments.
 */
export function patternMatches(pattern: string, subject: { text: string; kind: string }): boolean {
  if (pattern.endsWith(':*') && !pattern.endsWith('\\:*')) return subject.text.startsWith(plainText(pattern.slice(0, -2)))
  return globRegExp(pattern, subject.kind === 'path').test(subject.text)
}

const globCache = new Map<string, RegExp>()

function globRegExp(pattern: string, path: boolean): RegExp {
  const key = `${path ? 'p' : 'c'}:${pattern}`
  let re = globCache.get(key)
  if (re) return re
  let source = ''
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!
    if (c === '\\' && i + 1 < pattern.length) source += escapeRegExp(pattern[++i]!)
    else if (c === '*' && pattern[i + 1] === '*') {
      source += '.*'
      i++
      // `src/**/x` also matches `src/x`.
      if (pattern[i + 1] === '/') {
        source = `${source.slice(0, -2)}(?:.*/)?`
        i++
      }
    } else if (c === '*' && !path && i === pattern.length - 1 && source.endsWith(' ')) {
      // `ls *` (Claude Code's form): the command alone, or with arguments; never `lsof`.
      source = `${source.slice(0, -1)}(?: .*)?`
    } else if (c === '*') source += path ? '[^/]*' : '.*'
    else if (c === '?') source += path ? '[^/]' : '.'
    else source += escapeRegExp(c)
  }
  re = new RegExp(`^${source}$`, 's')
  if (globCache.size > 1_000) globCache.clear()
  globCache.set(key, re)
  return re
}

const COMPOUND = /[;&|`<>\n\r]|\$\(/

function isCompound(command: string): boolean {
  return COMPOUND.test(command)
}

/** A rough split of a shell command into its commands, enough for deny rules (which may catch too much, never too little). */
function commandParts(command: string): string[] {
  return command
    .split(/[;&|`\n\r]+|\$\(|\)/)
    .map((part) => part.trim())
    .filter((part) => part !== '')
}

function relativeTo(cwd: string | undefined, file: string): string {
  if (cwd === undefined || !file.startsWith('/')) return file
  const base = cwd.endsWith('/') ? cwd : `${cwd}/`
  return file.startsWith(base) ? file.slice(base.length) : file
}

function escapePattern(text: string): string {
  return text.replace(/[\\*?]/g, (c) => `\\${c}`)
}

function plainText(text: string): string {
  return text.replace(/\\(.)/g, '$1')
}

function escapeRegExp(c: string): string {
  return /[\\^$.*+?()[\]{}|/]/.test(c) ? `\\${c}` : c
}

function isObj(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}
