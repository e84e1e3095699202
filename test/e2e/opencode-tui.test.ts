/**
 * The real OpenCode TUI (npm `opencode-ai` 1.18.33) attached to this service:
 * `opencode attach URL` runs in a tmux pane; the test types a prompt
 * (send-keys), reads the screen (capture-pane) and sees the answer and the
 * tool call the fake Claude CLI made. A recording proxy between the TUI and
 * the service logs every route the TUI asks for.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { createServer, request, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { opencodeCli } from '../fixtures/opencode-cli.ts'
import { startOpencodeTui, tmux } from '../fixtures/opencode-tui.ts'
import { startStack, type Stack } from '../fixtures/stack.ts'

const API_KEY = 'tui-test-key'

interface Asked {
  method: string
  path: string
  status: number
}

/** Forwards every request to `target` and records its method, path (no query) and status. */
function recordingProxy(target: string, asked: Asked[]): Promise<Server> {
  const server = createServer((req, res) => {
    const upstream = request(target + req.url, { method: req.method, headers: req.headers }, (answer) => {
      asked.push({ method: req.method ?? '', path: (req.url ?? '').split('?')[0]!, status: answer.statusCode ?? 0 })
      res.writeHead(answer.statusCode ?? 502, answer.headers)
      answer.pipe(res)
    })
    upstream.on('error', () => res.destroy())
    req.pipe(upstream)
  })
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)))
}

describe('opencode tui - `opencode attach` against the service', () => {
  const pane = `ar-tui-${process.pid}`
  const asked: Asked[] = []
  let stack: Stack
  let proxy: Server
  let home: string

  let screen: () => Promise<string>

  beforeAll(async () => {
    const opencode = await opencodeCli()
    // With an API key on, given to the TUI as OpenCode's own server takes it (Basic, user opencode).
    stack = await startStack({ auth: { api_keys: [API_KEY] } })
    proxy = await recordingProxy(stack.url, asked)
    home = mkdtempSync(join(tmpdir(), 'opencode-tui-'))
    const url = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`
    screen = await startOpencodeTui({ pane, home, opencode, target: url, attachArgs: ['--password', API_KEY] })
  }, 300_000) // the first run installs the CLI
  afterAll(async () => {
    await tmux('kill-session', '-t', pane).catch(() => '')
    proxy?.close()
    await stack?.close()
    if (home) rmSync(home, { recursive: true, force: true })
    // The record of what the TUI asked for, for whoever reads the test's output.
    console.info(`opencode attach asked for:\n${[...new Set(asked.map((a) => `${a.method} ${a.path.replace(/ses_\w+/, '{id}')} -> ${a.status}`))].join('\n')}`)
  })

  it('tui - starts, takes a prompt, and shows the tool call and the answer', async () => {
    // Drawn once it has every answer it needs at start; a missing route would end it ("opencode exited").
    await vi.waitFor(async () => expect(await screen()).toMatch(/Agent Runtime/), { timeout: 60_000, interval: 250 })
    expect(await screen()).not.toContain('opencode exited')
    await tmux('send-keys', '-t', pane, '-l', 'tool: echo attached')
    await vi.waitFor(async () => expect(await screen()).toContain('tool: echo attached'), { timeout: 10_000, interval: 100 })
    await tmux('send-keys', '-t', pane, 'Enter')
    await vi.waitFor(
      async () => {
        const text = await screen()
        expect(text).toContain('Done. The tool said: "attached"')
        expect(text).toMatch(/Bash.*echo attached/)
      },
      { timeout: 60_000, interval: 250 },
    )
    // The prompt went through the session routes, and the TUI followed the event stream.
    // The proxy logs a route when its answer arrives, and the blocking message POST answers after the screen is done: wait for it.
    const routes = () => asked.map((a) => `${a.method} ${a.path.replace(/ses_\w+/, '{id}')} ${a.status}`)
    await vi.waitFor(() => expect(routes()).toEqual(expect.arrayContaining(['POST /session 200', 'POST /session/{id}/message 200', 'GET /global/event 200'])), {
      timeout: 10_000,
      interval: 100,
    })
    // Every request carried the key: nothing was refused.
    expect(asked.filter((a) => a.status === 401)).toEqual([])
    // Every route it needs to start answered.
    for (const path of ['/path', '/project/current', '/config/providers', '/provider', '/agent', '/experimental/capabilities', '/experimental/console']) {
      expect(asked.find((a) => a.path === path)?.status, path).toBe(200)
    }
  }, 180_000)
})
