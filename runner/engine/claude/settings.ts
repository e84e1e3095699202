import type { PreToolHook } from '../engine.ts'

/**
 * The `--settings` JSON that makes Claude Code run `hook.command` before every
 * tool call (a PreToolUse hook, matcher `*`). Checked with the real CLI 2.1.330:
 * - `onFailure: "block"`: a hook that crashes, exits 1 or times out denies the
 *   call (without it the CLI runs the tool anyway);
 * - `disableAllHooks: false`: flag settings win over the sandbox's
 *   `.claude/settings.json`, whose `disableAllHooks: true` would otherwise
 *   switch the hook off.
 */
export function preToolUseSettings(hook: PreToolHook): string {
  return JSON.stringify({
    disableAllHooks: false,
    hooks: {
      PreToolUse: [{ matcher: '*', hooks: [{ type: 'command', command: hook.command, timeout: hook.timeoutSeconds, onFailure: 'block' }] }],
    },
  })
}
