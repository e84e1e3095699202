import { describe, expect, it } from 'vitest'
import { claudeArgs, interruptLine, userLine } from '../../../../runner/engine/claude/args.ts'

const base = { args: [], permission_mode: 'bypassPermissions', allowed_tools: [], disallowed_tools: [] }
const STREAM = ['-p', '--input-format', 'stream-json', '--output-format', 'stream-json', '--verbose', '--include-partial-messages']
const WHOLE_BLOCKS = STREAM.slice(0, -1)

describe('claude args', () => {
  it.each([
    ['a new conversation', base, { cliSessionId: 'U', resume: false }, [...STREAM, '--session-id', 'U', '--permission-mode', 'bypassPermissions']],
    ['a resumed one', base, { cliSessionId: 'U', resume: true }, [...STREAM, '--resume', 'U', '--permission-mode', 'bypassPermissions']],
    [
      'tools, model, system prompt and extra args',
      { ...base, args: ['cli.js'], allowed_tools: ['Bash(git:*)', 'Read'], disallowed_tools: ['WebFetch'], model: 'opus', permission_mode: 'acceptEdits' },
      { cliSessionId: 'U', resume: false, instructions: 'be brief' },
      [
        'cli.js',
        ...STREAM,
        '--session-id',
        'U',
        '--allowedTools',
        'Bash(git:*)',
        'Read',
        '--disallowedTools',
        'WebFetch',
        '--permission-mode',
        'acceptEdits',
        '--model',
        'opus',
        '--append-system-prompt',
        'be brief',
      ],
    ],
    [
      'a resumed one keeps the system prompt it has',
      base,
      { cliSessionId: 'U', resume: true, instructions: 'be brief' },
      [...STREAM, '--resume', 'U', '--permission-mode', 'bypassPermissions'],
    ],
    [
      'partial messages switched off: whole blocks only',
      { ...base, partial_messages: false },
      { cliSessionId: 'U', resume: false },
      [...WHOLE_BLOCKS, '--session-id', 'U', '--permission-mode', 'bypassPermissions'],
    ],
  ])('args - %s', (_name, config, options, expected) => {
    expect(claudeArgs(config, options)).toEqual(expected)
  })

  it('stdin - a user turn and an interrupt are single JSON lines', () => {
    expect(JSON.parse(userLine('hi\nthere'))).toEqual({ type: 'user', message: { role: 'user', content: 'hi\nthere' } })
    expect(userLine('x').endsWith('\n')).toBe(true)
    expect(userLine('a\nb').split('\n')).toHaveLength(2)
    expect(JSON.parse(interruptLine('r1'))).toEqual({ type: 'control_request', request_id: 'r1', request: { subtype: 'interrupt' } })
  })
})
