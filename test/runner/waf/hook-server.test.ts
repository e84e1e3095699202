import { execFile } from 'node:child_process'
import { existsSync, readdirSync, statSync } from 'node:fs'
import { mkdir, mkdtemp, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import net from 'node:net'
import { describe, expect, it } from 'vitest'
import type { HookReply } from '../../../runner/waf/hook-protocol.ts'
import { WafHookServer } from '../../../runner/waf/hook-server.ts'

/** Sends raw bytes, returns the reply line (parsed). */
function ask(socketPath: string, raw: string | Buffer): Promise<HookReply> {
  return new Promise((resolve, reject) => {
    const socket = net.createConnection(socketPath)
    let answer = ''
    socket.setEncoding('utf8')
    socket.on('connect', () => socket.write(raw))
    socket.on('data', (text: string) => (answer += text))
    socket.on('end', () => {
      try {
        resolve(JSON.parse(answer) as HookReply)
      } catch (err) {
        reject(err as Error)
      }
    })
    socket.on('error', reject)
  })
}

const request = { tag: 't', tool_name: 'Bash', tool_input: { command: 'ls' } }

describe('waf hook server', () => {
  it('hook server - one request line, one reply line; the socket lives in a private directory', async () => {
    const seen: unknown[] = []
    const server = await WafHookServer.listen((req) => {
      seen.push(req)
      return { decision: 'allow' }
    })
    try {
      expect(statSync(server.dir).mode & 0o777).toBe(0o700)
      expect(await ask(server.socketPath, JSON.stringify(request) + '\n')).toEqual({ decision: 'allow' })
      // A request split over several writes is read whole.
      const line = JSON.stringify({ ...request, tool_input: { command: 'x'.repeat(200_000) } }) + '\n'
      expect(await ask(server.socketPath, Buffer.from(line))).toEqual({ decision: 'allow' })
      expect(seen).toHaveLength(2)
    } finally {
      await server.close()
    }
    expect(existsSync(server.dir)).toBe(false)
  })

  it.each([
    { name: 'not JSON', line: 'hello\n', reason: /could not check .*JSON/ },
    { name: 'no tag', line: JSON.stringify({ tool_name: 'Bash', tool_input: {} }) + '\n', reason: /malformed hook request/ },
    { name: 'no tool name', line: JSON.stringify({ tag: 't', tool_input: {} }) + '\n', reason: /malformed hook request/ },
  ])('hook server - a malformed request ($name) is denied', async ({ line, reason }) => {
    const server = await WafHookServer.listen(() => ({ decision: 'allow' }))
    try {
      const reply = await ask(server.socketPath, line)
      expect(reply.decision).toBe('deny')
      expect(reply.decision === 'deny' && reply.reason).toMatch(reason)
    } finally {
      await server.close()
    }
  })

  it('hook server - a handler that throws or rejects is a deny', async () => {
    let calls = 0
    const server = await WafHookServer.listen(() => {
      if (++calls === 1) throw new Error('matcher exploded')
      return Promise.reject(new Error('async failure'))
    })
    try {
      expect(await ask(server.socketPath, JSON.stringify(request) + '\n')).toMatchObject({ decision: 'deny', reason: expect.stringMatching(/matcher exploded/) })
      expect(await ask(server.socketPath, JSON.stringify(request) + '\n')).toMatchObject({ decision: 'deny', reason: expect.stringMatching(/async failure/) })
    } finally {
      await server.close()
    }
  })

  it('hook server - close cuts a hook that is still waiting', async () => {
    const server = await WafHookServer.listen(() => new Promise<HookReply>(() => {}))
    const pending = ask(server.socketPath, JSON.stringify(request) + '\n').then(
      () => 'answered',
      () => 'cut',
    )
    await new Promise((resolve) => setTimeout(resolve, 50))
    await server.close()
    // The hook sees the connection end without a reply line: JSON.parse('') throws.
    expect(await pending).toBe('cut')
  })

  it('hook server - a process that exits without close() leaves no directory behind', async () => {
    const module = fileURLToPath(new URL('../../../runner/waf/hook-server.ts', import.meta.url))
    const script = `import { WafHookServer } from ${JSON.stringify(module)}; const s = await WafHookServer.listen(() => ({ decision: 'allow' })); console.log(s.dir); process.exit(0)`
    const { stdout } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', script])
    const dir = stdout.trim()
    expect(dir).toMatch(/ar-waf-/)
    expect(existsSync(dir)).toBe(false)
  })

  it('hook server - a socket path that does not fit sockaddr_un is refused with a way out', async () => {
    const base = await mkdtemp(path.join(os.tmpdir(), 'ar-waf-deep-'))
    const deep = path.join(base, 'd'.repeat(100))
    await mkdir(deep)
    try {
      await expect(WafHookServer.listen(() => ({ decision: 'allow' }), { parentDir: deep })).rejects.toThrow(/longer than 107 bytes; use a shorter temporary directory/)
      expect(readdirSync(deep)).toEqual([]) // nothing left behind
    } finally {
      await rm(base, { recursive: true, force: true })
    }
  })
})
