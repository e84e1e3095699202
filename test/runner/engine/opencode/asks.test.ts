import { describe, expect, it } from 'vitest'
import { asksPerson } from '../../../../runner/engine/opencode/asks.ts'

describe('opencode asks - which tool calls go to a person under approval: ask', () => {
  it.each([
    { tool: 'bash', asks: true },
    { tool: 'edit', asks: true },
    { tool: 'write', asks: true },
    { tool: 'apply_patch', asks: true },
    { tool: 'webfetch', asks: true },
    { tool: 'websearch', asks: true },
    { tool: 'task', asks: true },
    { tool: 'my_mcp_tool', asks: true },
    { tool: 'read', asks: false },
    { tool: 'glob', asks: false },
    { tool: 'grep', asks: false },
    { tool: 'list', asks: false },
    { tool: 'todowrite', asks: false },
    { tool: 'skill', asks: false },
    { tool: 'question', asks: false },
  ])('$tool → $asks', ({ tool, asks }) => {
    expect(asksPerson(tool)).toBe(asks)
  })
})
