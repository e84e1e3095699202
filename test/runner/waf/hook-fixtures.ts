import { spawn } from 'node:child_process'
import { mkdir, mkdtemp, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { hookCommand } from '../../../runner/waf/guard.ts'

/**
 * What the real Claude Code CLI 2.1.330 wrote on a PreToolUse hook's stdin
 * (recorded offline against the fake model API; paths shortened).
 */
export const RECORDED_HOOK_INPUT = {
  session_id: 'cf5d7f6c-3c35-4254-a192-2349478ec456',
  transcript_path: '/srv/home/.claude/projects/-srv-work/cf5d7f6c-3c35-4254-a192-2349478ec456.jsonl',
  cwd: '/srv/work',
  prompt_id: 'a543df86-5928-40f4-9b41-58eadd5340e1',
  permission_mode: 'bypassPermissions',
  effort: { level: 'medium' },
  hook_event_name: 'PreToolUse',
  tool_name: 'Bash',
  tool_input: { command: 'touch /tmp/wafexp/canary1', description: 'Run command' },
  tool_use_id: 'toolu_fake_1',
}

export interface HookRun {
  code: number | null
  stdout: string
  stderr: string
  ms: number
}

/** Runs the hook as the CLI does: `/bin/sh -c <command>`, the input on stdin. */
export function runHook(command: string, stdin: string, env: Record<string, string>): Promise<HookRun> {
  return new Promise((resolve, reject) => {
    const started = performance.now()
    const child = spawn('/bin/sh', ['-c', command], { env: { PATH: process.env.PATH ?? '/usr/bin:/bin', ...env }, stdio: ['pipe', 'pipe', 'pipe'] })
    let stdout = ''
    let stderr = ''
    child.stdout.setEncoding('utf8').on('data', (text: string) => (stdout += text))
    child.stderr.setEncoding('utf8').on('data', (text: string) => (stderr += text))
    child.on('error', reject)
    child.on('close', (code) => resolve({ code, stdout, stderr, ms: performance.now() - started }))
    child.stdin.on('error', () => {})
    child.stdin.end(stdin)
  })
}

/** The hook command with its compile cache in a scratch directory. */
export async function scratchHookCommand(): Promise<{ command: string; dir: string; cleanup(): Promise<void> }> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'ar-waf-test-'))
  await mkdir(path.join(dir, 'node-cache'))
  return { command: hookCommand(process.execPath, dir), dir, cleanup: () => rm(dir, { recursive: true, force: true }) }
}

/** The reason of a deny the hook printed, or undefined when it printed nothing (allow). */
export function denyReason(stdout: string): string | undefined {
  if (stdout.trim() === '') return undefined
  const output = JSON.parse(stdout) as { hookSpecificOutput: { hookEventName: string; permissionDecision: string; permissionDecisionReason: string } }
  if (output.hookSpecificOutput.hookEventName !== 'PreToolUse' || output.hookSpecificOutput.permissionDecision !== 'deny') throw new Error(`not a deny: ${stdout}`)
  return output.hookSpecificOutput.permissionDecisionReason
}
