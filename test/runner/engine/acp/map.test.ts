import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import type { EngineOutput } from '../../../../runner/engine/engine.ts'
import { type AcpToolCall, approvalToolCall, describeToolCall, SessionUpdateMapper } from '../../../../runner/engine/acp/map.ts'

/** The agent's side of a recorded ACP exchange (test/fakes/recordings/acp/, copied from ../shared/reference/acp/). */
function agentMessages(file: string): Record<string, any>[] {
  return readFileSync(new URL(`../../../fakes/recordings/acp/${file}`, import.meta.url), 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line))
    .filter((entry) => entry.dir === 'agent->client')
    .map((entry) => entry.msg)
}

/** Replays a recording through a mapper as the engine does: updates, permission requests, and a flush at each prompt's answer. */
function replay(file: string): { outputs: EngineOutput[]; asked: unknown[] } {
  const mapper = new SessionUpdateMapper()
  const outputs: EngineOutput[] = []
  const asked: unknown[] = []
  for (const msg of agentMessages(file)) {
    if (msg.method === 'session/update') outputs.push(...mapper.map(msg.params.update))
    else if (msg.method === 'session/request_permission') {
      const { outputs: announced, call } = mapper.permissionAsked(msg.params.toolCall)
      outputs.push(...announced)
      asked.push(call)
    } else if (msg.result?.stopReason) outputs.push(...mapper.flush(), { kind: 'noise', line: 'end of turn' })
  }
  return { outputs, asked }
}

const whole = (outputs: EngineOutput[]) => outputs.filter((o) => o.kind !== 'text_delta' && o.kind !== 'thinking_delta')
const END: EngineOutput = { kind: 'noise', line: 'end of turn' }
const MKDIR = 'mkdir -p d1 && echo made > d1/f && cat d1/f'

describe('acp map - recorded agents', () => {
  it.each([
    {
      file: 'gemini-cli-acp.jsonl',
      expected: [
        { kind: 'thinking', text: '**Running the command**\nI should run the command the user gave.' },
        { kind: 'text', text: 'Running it now.' },
        { kind: 'tool_use', id: 'run_shell_command__call_bars_6', name: 'run_shell_command', input: { command: 'echo hi' } },
        // Gemini sends no output of a shell call.
        { kind: 'tool_result', toolUseId: 'run_shell_command__call_bars_6', content: '', isError: false },
        { kind: 'text', text: 'RESULT<<hi>>' },
        END,
        { kind: 'thinking', text: '**Running the command**\nI should run the command the user gave.' },
        { kind: 'text', text: 'Running it now.' },
        // Asked for instead of announced: the permission request announces it.
        { kind: 'tool_use', id: 'run_shell_command__call_bars_8', name: 'run_shell_command', input: { command: MKDIR } },
        { kind: 'tool_result', toolUseId: 'run_shell_command__call_bars_8', content: '', isError: false },
        { kind: 'text', text: 'RESULT<<made>>' },
        END,
        { kind: 'text', text: 'ECHO<<hello there>> turns=3' },
        END,
      ],
      asked: [{ id: 'run_shell_command__call_bars_8', name: 'run_shell_command', input: { command: MKDIR }, command: MKDIR }],
    },
    {
      file: 'claude-code-acp.jsonl',
      expected: [
        { kind: 'thinking', text: 'I should run the command the user gave.' },
        { kind: 'text', text: 'Running it now.' },
        // The first tool_call (rawInput {}) is not announced; the second, with the command, is.
        { kind: 'tool_use', id: 'toolu_bars_1', name: 'Bash', input: { command: 'echo hi' } },
        { kind: 'tool_result', toolUseId: 'toolu_bars_1', content: 'hi', isError: false },
        { kind: 'text', text: 'RESULT<<hi>>' },
        END,
        { kind: 'thinking', text: 'I should run the command the user gave.' },
        { kind: 'text', text: 'Running it now.' },
        { kind: 'tool_use', id: 'toolu_bars_5', name: 'Bash', input: { command: MKDIR } },
        { kind: 'tool_result', toolUseId: 'toolu_bars_5', content: 'made', isError: false },
        { kind: 'text', text: 'RESULT<<made>>' },
        END,
        { kind: 'text', text: 'ECHO<<hello there>> turns=5' },
        END,
      ],
      // The permission request carries no tool name: the one announced before is kept.
      asked: [{ id: 'toolu_bars_5', name: 'Bash', input: { command: MKDIR }, command: MKDIR }],
    },
    {
      file: 'codex-acp.jsonl',
      expected: [
        { kind: 'thinking', text: '\n\nI should run the command the user gave.' },
        { kind: 'text', text: 'Running it now.' },
        // argv `/bin/bash -lc CMD`: the command is the script.
        { kind: 'tool_use', id: 'call_bars_12', name: 'shell', input: { command: 'echo hi' } },
        { kind: 'tool_result', toolUseId: 'call_bars_12', content: 'hi\n', isError: false },
        { kind: 'text', text: 'RESULT<<hi>>' },
        END,
        { kind: 'thinking', text: '\n\nI should run the command the user gave.' },
        { kind: 'text', text: 'Running it now.' },
        { kind: 'tool_use', id: 'call_bars_19', name: 'shell', input: { command: MKDIR } },
        { kind: 'tool_result', toolUseId: 'call_bars_19', content: 'made\n', isError: false },
        { kind: 'text', text: 'RESULT<<made>>' },
        END,
        { kind: 'text', text: 'ECHO<<hello there>> turns=3' },
        END,
      ],
      asked: [],
    },
  ])('$file: thinking, text, one tool_use and tool_result per call, whole blocks per turn', ({ file, expected, asked }) => {
    const replayed = replay(file)
    expect(whole(replayed.outputs)).toEqual(expected)
    expect(replayed.asked).toEqual(asked)
  })

  it('streams every non-empty chunk as a delta, the whole block after', () => {
    const deltas = replay('claude-code-acp.jsonl').outputs.filter((o) => o.kind === 'text_delta' || o.kind === 'thinking_delta')
    expect(deltas.slice(0, 2)).toEqual([
      { kind: 'thinking_delta', text: 'I should run the command the user gave.' },
      { kind: 'text_delta', text: 'Running it now.' },
    ])
    expect(deltas.every((d) => d.text !== '')).toBe(true)
  })
})

describe('acp map - shapes', () => {
  const cases: { name: string; updates: unknown[]; expected: EngineOutput[] }[] = [
    {
      name: 'a plan is a checklist',
      updates: [
        {
          sessionUpdate: 'plan',
          entries: [
            { content: 'read', status: 'completed', priority: 'high' },
            { content: 'write', status: 'in_progress', priority: 'high' },
            { content: 'test', status: 'pending', priority: 'low' },
          ],
        },
      ],
      expected: [{ kind: 'thinking', text: 'Plan:\n[x] read\n[~] write\n[ ] test' }],
    },
    {
      name: 'a failed call is an error result, with its text content',
      updates: [
        { sessionUpdate: 'tool_call', toolCallId: 't1', title: 'ls', kind: 'execute', status: 'in_progress', rawInput: { command: 'ls' } },
        {
          sessionUpdate: 'tool_call_update',
          toolCallId: 't1',
          status: 'failed',
          content: [{ type: 'content', content: { type: 'text', text: 'no such file' } }],
        },
        { sessionUpdate: 'tool_call_update', toolCallId: 't1', status: 'failed' },
      ],
      expected: [
        { kind: 'tool_use', id: 't1', name: 'shell', input: { command: 'ls' } },
        { kind: 'tool_result', toolUseId: 't1', content: 'no such file', isError: true },
      ],
    },
    {
      name: 'a non-zero exit code in rawOutput is an error',
      updates: [
        {
          sessionUpdate: 'tool_call_update',
          toolCallId: 'c',
          kind: 'execute',
          status: 'completed',
          rawInput: { command: ['sh', '-c', 'false'] },
          rawOutput: { exit_code: 1, formatted_output: '' },
        },
      ],
      expected: [
        { kind: 'tool_use', id: 'c', name: 'shell', input: { command: 'false' } },
        { kind: 'tool_result', toolUseId: 'c', content: '', isError: true },
      ],
    },
    {
      name: 'a tool without rawInput is described by its title and first location',
      updates: [
        {
          sessionUpdate: 'tool_call',
          toolCallId: 'write_file__9',
          title: 'Writing a.txt',
          kind: 'edit',
          status: 'in_progress',
          locations: [{ path: '/w/a.txt' }],
        },
      ],
      expected: [{ kind: 'tool_use', id: 'write_file__9', name: 'write_file', input: { title: 'Writing a.txt', path: '/w/a.txt' } }],
    },
    {
      name: 'other updates and bad shapes give nothing',
      updates: [
        { sessionUpdate: 'usage_update', used: 35, size: 258400 },
        { sessionUpdate: 'available_commands_update', availableCommands: [] },
        { sessionUpdate: 'current_mode_update', currentModeId: 'default' },
        { sessionUpdate: 'agent_message_chunk', content: { type: 'image', data: 'x' } },
        { sessionUpdate: 'tool_call', title: 'no id' },
        null,
        'text',
      ],
      expected: [],
    },
  ]
  it.each(cases)('$name', ({ updates, expected }) => {
    const mapper = new SessionUpdateMapper()
    expect(updates.flatMap((u) => mapper.map(u))).toEqual(expected)
  })

  it('codex-acp: an argv is a shell command whatever the kind (`ls` is a search, `cat` a read)', () => {
    const asked = { toolCallId: 'call_1', kind: 'search', title: 'List /w', rawInput: { command: ['/bin/bash', '-lc', 'echo hi && ls; rm -rf /'], cwd: '/w' } }
    expect(new SessionUpdateMapper().permissionAsked(asked).call).toEqual({
      id: 'call_1',
      name: 'shell',
      input: { command: 'echo hi && ls; rm -rf /' },
      command: 'echo hi && ls; rm -rf /',
    })
  })

  it.each([
    { argv: ['/bin/bash', '-lc', 'echo hi'], command: 'echo hi' },
    { argv: ['/bin/zsh', '-c', 'a && b'], command: 'a && b' },
    { argv: ['ls', '-la'], command: 'ls -la' },
  ])('argv $argv runs $command', ({ argv, command }) => {
    expect(describeToolCall({ toolCallId: 'x', kind: 'execute', rawInput: { command: argv } })?.command).toBe(command)
  })
})

describe('acp map - the call a person approves, under Claude Code’s names', () => {
  it.each([
    {
      agent: 'gemini shell',
      call: { id: 'g1', name: 'run_shell_command', input: { command: 'git status' }, command: 'git status' },
      expected: { toolName: 'Bash', input: { command: 'git status' } },
    },
    {
      agent: 'codex-acp shell',
      call: { id: 'c1', name: 'shell', input: { command: 'ls' }, command: 'ls' },
      expected: { toolName: 'Bash', input: { command: 'ls' } },
    },
    {
      agent: 'claude-code-acp Bash',
      call: { id: 'k1', name: 'Bash', input: { command: 'ls' }, command: 'ls' },
      expected: { toolName: 'Bash', input: { command: 'ls' } },
    },
    {
      agent: 'claude-code-acp Edit',
      call: { id: 'k2', name: 'Edit', input: { file_path: '/w/a.ts', old_string: 'a', new_string: 'b' } },
      expected: { toolName: 'Edit', input: { file_path: '/w/a.ts', old_string: 'a', new_string: 'b' } },
    },
    {
      agent: 'gemini write_file',
      call: { id: 'g2', name: 'write_file', input: { title: 'Writing to a.ts', path: '/w/a.ts' }, kind: 'edit' },
      expected: { toolName: 'Write', input: { title: 'Writing to a.ts', path: '/w/a.ts', file_path: '/w/a.ts' } },
    },
    {
      agent: 'codex-acp edit (named by its title)',
      call: { id: 'c2', name: 'Edit /w/a.ts', input: { title: 'Edit /w/a.ts', path: '/w/a.ts' }, kind: 'edit' },
      expected: { toolName: 'Edit', input: { title: 'Edit /w/a.ts', path: '/w/a.ts', file_path: '/w/a.ts' } },
    },
    { agent: 'an unknown tool', call: { id: 'u1', name: 'mcp_thing', input: { x: 1 } }, expected: { toolName: 'mcp_thing', input: { x: 1 } } },
  ])('$agent', ({ call, expected }) => {
    expect(approvalToolCall(call as AcpToolCall, '/w')).toEqual({ ...expected, toolUseId: call.id, cwd: '/w' })
  })
})
