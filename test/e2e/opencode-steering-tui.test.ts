/**
 * The real OpenCode TUI (`opencode attach`, 1.18.33, in tmux) answers a
 * permission request of the real Claude Code CLI (fake Anthropic API,
 * `approval: ask`) running behind the service: its permission dialog opens
 * with the command, and a keypress allows the call.
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { opencodeCli } from '../fixtures/opencode-cli.ts'
import { startOpencodeTui, tmux } from '../fixtures/opencode-tui.ts'
import { startStack, type Stack } from '../fixtures/stack.ts'
import { claudeRow } from './engines/claude.ts'
import type { EngineFixture } from './engines/row.ts'

describe('opencode steering tui - the TUI’s permission dialog answers the real Claude Code CLI', () => {
  const pane = `ar-steer-tui-${process.pid}`
  let fixture: EngineFixture
  let stack: Stack
  let home: string
  let screen: () => Promise<string>
  /** Waits until the screen shows what `check` expects; the screen is in the failure. */
  const onScreen = (check: (text: string) => void, timeout = 60_000) =>
    vi.waitFor(
      async () => {
        const text = await screen()
        try {
          check(text)
        } catch (err) {
          throw new Error(`${(err as Error).message}\n--- screen ---\n${text}`)
        }
      },
      { timeout, interval: 250 },
    )

  beforeAll(async () => {
    const opencode = await opencodeCli()
    fixture = await claudeRow.setup()
    stack = await startStack({ engine: { default: 'claude', approval: 'ask', approval_timeout: '120s' }, engines: [fixture.config] })
    home = mkdtempSync(path.join(tmpdir(), 'opencode-steer-tui-'))
    screen = await startOpencodeTui({ pane, home, opencode, target: stack.url })
  }, 300_000)
  afterAll(async () => {
    await tmux('kill-session', '-t', pane).catch(() => '')
    await stack?.close()
    await fixture?.stop()
    if (home) rmSync(home, { recursive: true, force: true })
  })

  it('tui - a tool call waiting for a person opens the permission dialog with the command; Enter allows it once and the tool runs', async () => {
    await onScreen((text) => expect(text).toMatch(/Agent Runtime/))
    await tmux('send-keys', '-t', pane, '-l', 'run: touch canary')
    await onScreen((text) => expect(text).toContain('run: touch canary'), 10_000)
    await tmux('send-keys', '-t', pane, 'Enter')

    await onScreen((text) => {
      expect(text).toContain('Permission required')
      expect(text).toContain('$ touch canary')
      expect(text).toMatch(/Allow once/)
    })
    const [session] = (await (await fetch(`${stack.url}/session`)).json()) as { id: string; directory: string }[]
    const pending = (await (await fetch(`${stack.url}/permission`)).json()) as { id: string; sessionID: string }[]
    expect(pending).toEqual([expect.objectContaining({ sessionID: session!.id, permission: 'bash' })])
    expect(existsSync(path.join(session!.directory, 'canary'))).toBe(false)

    // The dialog's first choice is "Allow once".
    await tmux('send-keys', '-t', pane, 'Enter')
    await onScreen((text) => {
      expect(text).not.toContain('Permission required')
      expect(text).toContain('Done. The tool said:')
    })
    expect(existsSync(path.join(session!.directory, 'canary'))).toBe(true)
    expect(await (await fetch(`${stack.url}/permission`)).json()).toEqual([])
  }, 180_000)
})
