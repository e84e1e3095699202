import { describe, expect, it } from 'vitest'
import { wafToolCall } from '../../../../runner/engine/opencode/tool-call.ts'

describe('opencode tool-call - OpenCode tools as the WAF reads them', () => {
  it.each([
    { tool: 'bash', args: { command: 'ls', description: 'list' }, name: 'Bash', input: { command: 'ls', description: 'list' } },
    { tool: 'write', args: { filePath: '/a', content: 'x' }, name: 'Write', input: { file_path: '/a', content: 'x' } },
    { tool: 'edit', args: { filePath: '/a', oldString: 'o', newString: 'n' }, name: 'Edit', input: { file_path: '/a', old_string: 'o', new_string: 'n' } },
    { tool: 'read', args: { filePath: '/etc/passwd' }, name: 'Read', input: { file_path: '/etc/passwd' } },
    { tool: 'glob', args: { pattern: '*', path: '/x' }, name: 'Glob', input: { pattern: '*', path: '/x' } },
    { tool: 'grep', args: { pattern: 'k', path: '/x' }, name: 'Grep', input: { pattern: 'k', path: '/x' } },
    { tool: 'webfetch', args: { url: 'http://x' }, name: 'WebFetch', input: { url: 'http://x' } },
    { tool: 'task', args: { prompt: 'p', description: 'd' }, name: 'Task', input: { prompt: 'p', description: 'd' } },
    { tool: 'my_mcp_tool', args: { command: 'x' }, name: 'my_mcp_tool', input: { command: 'x' } },
    { tool: 'bash', args: 'not an object', name: 'Bash', input: 'not an object' },
  ])('$tool → $name', ({ tool, args, name, input }) => {
    expect(wafToolCall(tool, args, 'call_1', '/work')).toEqual({ toolName: name, input, cwd: '/work', toolUseId: 'call_1' })
  })

  it('bash with workdir: globs expand from there', () => {
    expect(wafToolCall('bash', { command: 'rm *', workdir: 'sub' }, undefined, '/work')).toMatchObject({ cwd: '/work/sub' })
    expect(wafToolCall('bash', { command: 'rm *', workdir: '/abs' }, undefined, '/work')).toMatchObject({ cwd: '/abs' })
  })
})
