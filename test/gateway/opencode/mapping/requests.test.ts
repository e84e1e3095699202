import { describe, expect, it } from 'vitest'
import type { PermissionRequest, QuestionRequest } from '../../../../contract/mod.ts'
import {
  alwaysPatterns,
  decisionOfReply,
  permissionName,
  permissionPatterns,
  permissionReplyOf,
  replyOfDecision,
  toPermission,
  toPermissionV2,
  toQuestion,
} from '../../../../gateway/opencode/mapping/requests.ts'
import { Permission, PermissionV2, Question } from '../../../../gateway/opencode/schemas/steering.ts'

const DIR = '/srv/sandboxes/ses_1'

function request(name: string, input: unknown, over: Partial<PermissionRequest> = {}): PermissionRequest {
  return { id: 'per_1', tool: { id: 'toolu_1', name, input }, title: `${name}: x`, options: ['allow_once', 'allow_always', 'deny'], expires_at: 9_000, ...over }
}

describe('opencode requests - the service’s steering requests in OpenCode’s shapes', () => {
  it.each([
    ['Bash', 'bash'],
    ['Edit', 'edit'],
    ['MultiEdit', 'edit'],
    ['Write', 'edit'],
    ['NotebookEdit', 'edit'],
    ['write', 'edit'],
    ['apply_patch', 'edit'],
    ['Read', 'read'],
    ['Glob', 'glob'],
    ['Grep', 'grep'],
    ['LS', 'list'],
    ['WebFetch', 'webfetch'],
    ['WebSearch', 'websearch'],
    ['Task', 'task'],
    ['TodoWrite', 'todowrite'],
    ['bash', 'bash'],
    ['mcp__github__create_issue', 'mcp__github__create_issue'],
  ])('requests - permission name of %s is %s', (tool, name) => {
    expect(permissionName(tool)).toBe(name)
  })

  it.each<[string, Record<string, unknown>, string[]]>([
    ['bash', { command: 'touch canary', description: 'make it' }, ['touch canary']],
    ['bash', { description: 'no command' }, ['*']],
    ['edit', { file_path: `${DIR}/src/a.ts` }, ['src/a.ts']],
    ['edit', { file_path: 'src/b.ts' }, ['src/b.ts']],
    ['edit', { notebook_path: `${DIR}/n.ipynb` }, ['n.ipynb']],
    ['read', { file_path: '/etc/hosts' }, ['/etc/hosts']],
    ['read', { filePath: `${DIR}/x` }, ['x']],
    ['list', { path: DIR }, [DIR]],
    ['webfetch', { url: 'https://example.com/a' }, ['https://example.com/a']],
    ['glob', { pattern: '**/*.ts' }, ['**/*.ts']],
    ['grep', { pattern: 'TODO', path: 'src' }, ['TODO']],
    ['websearch', { query: 'zod v4' }, ['zod v4']],
    ['task', { subagent_type: 'general', prompt: 'p' }, ['general']],
    ['mcp__x__y', { anything: 1 }, ['*']],
  ])('requests - patterns of %s %j', (permission, input, patterns) => {
    expect(permissionPatterns(permission, input, DIR)).toEqual(patterns)
  })

  it.each<[string | undefined, string[]]>([
    [undefined, []],
    ['Bash(touch canary *)', ['touch canary *']],
    ['Bash(git status:*)', ['git status *']],
    ['Bash(npm run test:*)', ['npm run test *']],
    ['Bash(echo \\*)', ['echo *']],
    ['Bash(literal\\:*)', ['literal:*']],
    ['Edit(src/**)', ['src/**']],
    ['WebFetch', ['*']],
    ['  Read  ', ['*']],
  ])('requests - "allow always" rule %j is OpenCode always %j', (rule, always) => {
    expect(alwaysPatterns(rule)).toEqual(always)
  })

  it('requests - a Bash call: permission bash, the command as pattern and metadata, always from the rule, the call as tool', () => {
    const info = toPermission(request('Bash', { command: 'touch canary' }, { always: 'Bash(touch canary *)' }), 'ses_1', DIR, {
      messageID: 'msg_2',
      callID: 'toolu_1',
    })
    expect(info).toEqual({
      id: 'per_1',
      sessionID: 'ses_1',
      permission: 'bash',
      patterns: ['touch canary'],
      metadata: { title: 'Bash: x', tool: 'Bash', input: { command: 'touch canary' }, expires_at: 9_000, command: 'touch canary' },
      always: ['touch canary *'],
      tool: { messageID: 'msg_2', callID: 'toolu_1' },
    })
    expect(() => Permission.parse(info)).not.toThrow()
  })

  it('requests - an Edit call: the path relative to the session as pattern, absolute as metadata.filepath; no tool when the message is not known', () => {
    const info = toPermission(request('Edit', { file_path: 'src/a.ts', old_string: 'a', new_string: 'b' }), 'ses_1', DIR)
    expect(info).toMatchObject({ permission: 'edit', patterns: ['src/a.ts'], metadata: { filepath: `${DIR}/src/a.ts` }, always: [] })
    expect(info).not.toHaveProperty('tool')
  })

  it('requests - "always" is empty when the request does not offer allow_always, and a non-object input is kept as it came', () => {
    const info = toPermission(request('Custom', 'raw', { options: ['allow_once', 'deny'], always: 'Custom' }), 'ses_1', DIR)
    expect(info).toMatchObject({ permission: 'Custom', patterns: ['*'], always: [], metadata: { input: 'raw' } })
  })

  it('requests - the /api shape: action, resources, save, source', () => {
    const info = toPermission(request('Bash', { command: 'ls' }, { always: 'Bash(ls:*)' }), 'ses_1', DIR, { messageID: 'msg_2', callID: 'toolu_1' })
    const v2 = toPermissionV2(info)
    expect(v2).toEqual({
      id: 'per_1',
      sessionID: 'ses_1',
      action: 'bash',
      resources: ['ls'],
      save: ['ls *'],
      metadata: info.metadata,
      source: { type: 'tool', messageID: 'msg_2', callID: 'toolu_1' },
    })
    expect(() => PermissionV2.parse(v2)).not.toThrow()
    expect(toPermissionV2({ ...info, tool: undefined } as never)).not.toHaveProperty('source')
  })

  it('requests - a question: header and descriptions filled, multi_select as multiple, typed answers allowed', () => {
    const question: QuestionRequest = {
      id: 'que_1',
      expires_at: 9_000,
      questions: [
        { question: 'Which colour?', header: 'Colour', options: [{ label: 'Red', description: 'warm' }, { label: 'Blue' }], multi_select: false },
        { question: 'Extras?', options: [], multi_select: true },
      ],
    }
    const info = toQuestion(question, 'ses_1', { messageID: 'msg_2', callID: 'toolu_q' })
    expect(info).toEqual({
      id: 'que_1',
      sessionID: 'ses_1',
      questions: [
        {
          question: 'Which colour?',
          header: 'Colour',
          options: [
            { label: 'Red', description: 'warm' },
            { label: 'Blue', description: '' },
          ],
          multiple: false,
          custom: true,
        },
        { question: 'Extras?', header: '', options: [], multiple: true, custom: true },
      ],
      tool: { messageID: 'msg_2', callID: 'toolu_q' },
    })
    expect(() => Question.parse(info)).not.toThrow()
  })

  it.each([
    ['allow_once', 'once'],
    ['allow_always', 'always'],
    ['deny', 'reject'],
  ] as const)('requests - decision %s is reply %s, and back', (decision, reply) => {
    expect(replyOfDecision(decision)).toBe(reply)
    expect(decisionOfReply(reply)).toBe(decision)
  })

  it.each([
    [{ reply: 'once' as const }, { kind: 'permission', id: 'per_1', decision: 'allow_once' }],
    [
      { reply: 'reject' as const, message: 'not that file' },
      { kind: 'permission', id: 'per_1', decision: 'deny', message: 'not that file' },
    ],
    [
      { reply: 'reject' as const, message: '' },
      { kind: 'permission', id: 'per_1', decision: 'deny' },
    ],
  ])('requests - the answer %j is the reply %j', (body, reply) => {
    expect(permissionReplyOf('per_1', body)).toEqual(reply)
  })
})
