import { describe, expect, it } from 'vitest'
import { claudeArgs } from '../../../../runner/engine/claude/args.ts'
import { preToolUseSettings } from '../../../../runner/engine/claude/settings.ts'

const config = { args: [], permission_mode: 'bypassPermissions', allowed_tools: [], disallowed_tools: [] }
const base = { cliSessionId: '00000000-0000-4000-8000-000000000000', resume: false }

describe('claude settings', () => {
  it('settings - a PreToolUse hook for every tool that blocks when it fails, and hooks kept on', () => {
    expect(JSON.parse(preToolUseSettings({ command: "exec '/n' '/h.ts'", timeoutSeconds: 30 }))).toEqual({
      disableAllHooks: false,
      hooks: { PreToolUse: [{ matcher: '*', hooks: [{ type: 'command', command: "exec '/n' '/h.ts'", timeout: 30, onFailure: 'block' }] }] },
    })
  })

  it('settings - passed with --settings only when there is a hook', () => {
    expect(claudeArgs(config, base)).not.toContain('--settings')
    const args = claudeArgs(config, { ...base, preToolHook: { command: 'x', timeoutSeconds: 5 } })
    const at = args.indexOf('--settings')
    expect(at).toBeGreaterThan(0)
    expect(JSON.parse(args[at + 1]!).hooks.PreToolUse[0].hooks[0]).toMatchObject({ command: 'x', timeout: 5 })
  })
})
