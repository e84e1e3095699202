import path from 'node:path'
import type { PermissionDecision, PermissionRequest, QuestionRequest, SteeringReply } from '../../../contract/mod.ts'
import type { Permission, PermissionReply, PermissionReplyBody, PermissionTool, PermissionV2, Question } from '../schemas/steering.ts'
import { toolInput } from './parts.ts'

/**
 * The service's steering requests in OpenCode's shapes, and OpenCode's
 * answers in the service's. Pure: what OpenCode 1.18's own tools put in a
 * request (packages/opencode/src/tool/*: `ctx.ask({permission, patterns,
 * always, metadata})`) is followed as far as the agent CLI's call tells it.
 */

/** OpenCode's permission name for an agent CLI's tool (Claude Code's names; OpenCode's own pass as they are). */
const PERMISSION_NAMES: Record<string, string> = {
  Bash: 'bash',
  Edit: 'edit',
  MultiEdit: 'edit',
  Write: 'edit',
  NotebookEdit: 'edit',
  // OpenCode asks one `edit` permission for each of its file-changing tools.
  write: 'edit',
  multiedit: 'edit',
  apply_patch: 'edit',
  Read: 'read',
  Glob: 'glob',
  Grep: 'grep',
  LS: 'list',
  WebFetch: 'webfetch',
  WebSearch: 'websearch',
  Task: 'task',
  TodoWrite: 'todowrite',
}

/** OpenCode's permission name for a tool: bash, edit, read, webfetch…, else the tool's own name. */
export function permissionName(tool: string): string {
  return PERMISSION_NAMES[tool] ?? tool
}

const PATH_KEYS = ['file_path', 'notebook_path', 'filePath', 'path'] as const

/** The call's path, absolute: as given, or resolved against the session's directory. */
function pathOf(input: Record<string, unknown>, directory: string): string | undefined {
  for (const key of PATH_KEYS) {
    const value = input[key]
    if (typeof value === 'string' && value !== '') return path.resolve(directory, value)
  }
  return undefined
}

/** A path as OpenCode's patterns hold it: relative to the session's directory when inside it. */
function relativePattern(file: string, directory: string): string {
  const relative = path.relative(directory, file)
  return relative === '' || relative.startsWith('..') || path.isAbsolute(relative) ? file : relative
}

function stringField(input: Record<string, unknown>, key: string): string | undefined {
  const value = input[key]
  return typeof value === 'string' && value !== '' ? value : undefined
}

/**
 * What the call touches, as OpenCode's tools name it: the command (bash), the
 * path relative to the session (edit, read, list), the URL (webfetch), the
 * glob (glob, grep), the query (websearch), the subagent (task); `*` else.
 */
export function permissionPatterns(permission: string, input: Record<string, unknown>, directory: string): string[] {
  let pattern: string | undefined
  if (permission === 'bash') pattern = stringField(input, 'command')
  else if (permission === 'edit' || permission === 'read' || permission === 'list') {
    const file = pathOf(input, directory)
    pattern = file === undefined ? undefined : relativePattern(file, directory)
  } else if (permission === 'webfetch') pattern = stringField(input, 'url')
  else if (permission === 'glob' || permission === 'grep') pattern = stringField(input, 'pattern')
  else if (permission === 'websearch') pattern = stringField(input, 'query')
  else if (permission === 'task') pattern = stringField(input, 'subagent_type')
  return [pattern ?? '*']
}

/**
 * The service's "allow always" rule (Claude Code's syntax: `Bash(git
 * status:*)`, `Edit(src/**)`, a bare `WebFetch`) as OpenCode's `always`
 * patterns: the rule's pattern, a `prefix:*` read as OpenCode's `prefix *`,
 * escapes undone; a bare tool name is `*`. No rule: none.
 */
export function alwaysPatterns(rule: string | undefined): string[] {
  if (rule === undefined) return []
  const match = /^[^(]+\((.*)\)$/s.exec(rule.trim())
  if (!match) return ['*']
  let pattern = match[1]!
  if (pattern.endsWith(':*') && !pattern.endsWith('\\:*')) pattern = `${pattern.slice(0, -2)} *`
  return [pattern.replace(/\\(.)/g, '$1')]
}

/** A permission request as OpenCode's `permission.asked` carries it; `tool` when the call's message is known. */
export function toPermission(request: PermissionRequest, sessionID: string, directory: string, tool?: PermissionTool): Permission {
  const input = toolInput(request.tool.input)
  const permission = permissionName(request.tool.name)
  const command = permission === 'bash' ? stringField(input, 'command') : undefined
  const filepath = permission === 'edit' || permission === 'read' ? pathOf(input, directory) : undefined
  const metadata: Record<string, unknown> = {
    title: request.title,
    tool: request.tool.name,
    input: request.tool.input ?? {},
    expires_at: request.expires_at,
    ...(command !== undefined && { command }),
    ...(filepath !== undefined && { filepath }),
  }
  return {
    id: request.id,
    sessionID,
    permission,
    patterns: permissionPatterns(permission, input, directory),
    metadata,
    always: request.options.includes('allow_always') ? alwaysPatterns(request.always) : [],
    ...(tool !== undefined && { tool }),
  }
}

/** The same request on the `/api` routes (OpenCode's PermissionV2Request). */
export function toPermissionV2(permission: Permission): PermissionV2 {
  return {
    id: permission.id,
    sessionID: permission.sessionID,
    action: permission.permission,
    resources: permission.patterns,
    save: permission.always,
    metadata: permission.metadata,
    ...(permission.tool !== undefined && { source: { type: 'tool' as const, ...permission.tool } }),
  }
}

/** A question request in OpenCode's shape (every question takes typed answers too, as the agent reads any text). */
export function toQuestion(request: QuestionRequest, sessionID: string, tool?: PermissionTool): Question {
  return {
    id: request.id,
    sessionID,
    questions: request.questions.map((item) => ({
      question: item.question,
      header: item.header ?? '',
      options: item.options.map((option) => ({ label: option.label, description: option.description ?? '' })),
      multiple: item.multi_select,
      custom: true,
    })),
    ...(tool !== undefined && { tool }),
  }
}

const REPLIES: Record<PermissionDecision, PermissionReply> = { allow_once: 'once', allow_always: 'always', deny: 'reject' }
const DECISIONS: Record<PermissionReply, PermissionDecision> = { once: 'allow_once', always: 'allow_always', reject: 'deny' }

/** OpenCode's reply for a decision: allow_once → once, allow_always → always, deny → reject. */
export function replyOfDecision(decision: PermissionDecision): PermissionReply {
  return REPLIES[decision]
}

/** The decision an OpenCode reply stands for. */
export function decisionOfReply(reply: PermissionReply): PermissionDecision {
  return DECISIONS[reply]
}

/** An OpenCode permission answer as the service's reply; an empty message is none. */
export function permissionReplyOf(requestID: string, body: PermissionReplyBody): SteeringReply {
  return {
    kind: 'permission',
    id: requestID,
    decision: decisionOfReply(body.reply),
    ...(body.message !== undefined && body.message !== '' && { message: body.message }),
  }
}
