import { spawn } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterEach, describe, expect, it } from 'vitest'

const FAKE = fileURLToPath(new URL('./fake-claude.ts', import.meta.url))

const roots: string[] = []
afterEach(() => {
  for (const root of roots.splice(0)) fs.rmSync(root, { recursive: true, force: true })
})

interface Outcome {
  /** The tool_result block the agent got. */
  result: { content: string; is_error: boolean }
  /** The result line's permission_denials. */
  denials: unknown[]
  canary: boolean
  hookInput?: Record<string, unknown>
}

/** One `tool: touch canary` turn of the fake CLI with these settings (and project settings); did the tool run? */
async function turn(settings: object | undefined, project?: object): Promise<Outcome> {
  const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'fake-hooks-')))
  roots.push(root)
  const cwd = path.join(root, 'work')
  fs.mkdirSync(path.join(cwd, '.claude'), { recursive: true })
  if (project) fs.writeFileSync(path.join(cwd, '.claude', 'settings.json'), JSON.stringify(project))
  const canary = path.join(root, 'canary')
  const args = ['-p', '--output-format', 'stream-json', '--verbose', ...(settings ? ['--settings', JSON.stringify(settings)] : []), `tool: touch ${canary}`]
  const stdout = await new Promise<string>((resolve, reject) => {
    const child = spawn(process.execPath, [FAKE, ...args], { cwd, env: { ...process.env, CLAUDE_CONFIG_DIR: path.join(root, 'config'), HOOK_LOG: path.join(root, 'hook-input.json') }, stdio: ['ignore', 'pipe', 'inherit'] })
    let out = ''
    child.stdout.setEncoding('utf8').on('data', (text: string) => (out += text))
    child.on('error', reject)
    child.on('close', () => resolve(out))
  })
  const lines = stdout.trim().split('\n').map((line) => JSON.parse(line) as Record<string, any>)
  const user = lines.find((line) => line.type === 'user')!
  const resultLine = lines.find((line) => line.type === 'result')!
  const logged = path.join(root, 'hook-input.json')
  return {
    result: user.message.content[0],
    denials: resultLine.permission_denials,
    canary: fs.existsSync(canary),
    ...(fs.existsSync(logged) && { hookInput: JSON.parse(fs.readFileSync(logged, 'utf8')) }),
  }
}

const hooks = (hook: object, matcher = '*') => ({ hooks: { PreToolUse: [{ matcher, hooks: [{ type: 'command', ...hook }] }] } })

/** The tool_result texts below are the ones the real CLI 2.1.330 printed for the same hooks. */
describe('fake claude - PreToolUse hooks as the real CLI runs them', () => {
  it('hooks - exit 2 denies with stderr; the hook got the call as JSON on stdin', async () => {
    const command = 'cat > "$HOOK_LOG"; echo "WAF says no" >&2; exit 2'
    const out = await turn(hooks({ command }))
    expect(out.canary).toBe(false)
    expect(out.result).toMatchObject({ is_error: true, content: `PreToolUse:Bash hook error: [${command}]: WAF says no\n` })
    expect(out.denials).toEqual([{ tool_name: 'Bash', tool_use_id: expect.stringMatching(/^toolu_/), tool_input: { command: expect.stringMatching(/^touch /), description: expect.any(String) } }])
    expect(out.hookInput).toMatchObject({ hook_event_name: 'PreToolUse', tool_name: 'Bash', tool_input: { command: expect.stringMatching(/^touch /) }, tool_use_id: expect.stringMatching(/^toolu_/), session_id: expect.any(String), cwd: expect.any(String) })
  })

  it('hooks - a JSON deny decision shows only its reason', async () => {
    const out = await turn(hooks({ command: `echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"WAF JSON deny"}}'` }))
    expect(out).toMatchObject({ canary: false, result: { is_error: true, content: 'PreToolUse:Bash hook error: WAF JSON deny' } })
  })

  it('hooks - a failing or slow hook lets the tool run, unless onFailure is "block"', async () => {
    expect((await turn(hooks({ command: 'echo oops >&2; exit 1' }))).canary).toBe(true)
    expect(await turn(hooks({ command: 'echo oops >&2; exit 1', onFailure: 'block' }))).toMatchObject({
      canary: false,
      result: { content: 'PreToolUse:Bash hook error: [echo oops >&2; exit 1]: failed; blocking because onFailure is "block"\noops' },
    })
    expect((await turn(hooks({ command: 'sleep 3', timeout: 1 }))).canary).toBe(true)
    expect(await turn(hooks({ command: 'sleep 3', timeout: 1, onFailure: 'block' }))).toMatchObject({
      canary: false,
      result: { content: 'PreToolUse:Bash hook error: [sleep 3]: timed out; blocking because onFailure is "block"' },
    })
  })

  it('hooks - exit 0 with plain output allows; other tools are not matched by a Bash-only matcher', async () => {
    expect((await turn(hooks({ command: 'echo garbage' }))).canary).toBe(true)
    expect((await turn(hooks({ command: 'exit 2' }, 'Write|Edit'))).canary).toBe(true)
    expect((await turn(hooks({ command: 'exit 2' }, 'Bash'))).canary).toBe(false)
  })

  it('hooks - the project disableAllHooks switches hooks off unless the flag settings say false', async () => {
    expect((await turn(hooks({ command: 'exit 2' }), { disableAllHooks: true })).canary).toBe(true)
    expect((await turn({ disableAllHooks: false, ...hooks({ command: 'exit 2' }) }, { disableAllHooks: true })).canary).toBe(false)
    expect((await turn(undefined)).canary).toBe(true)
  })
})
