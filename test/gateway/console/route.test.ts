import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { pathToFileURL } from 'node:url'
import fastify from 'fastify'
import pino from 'pino'
import { afterEach, describe, expect, it } from 'vitest'
import { registerConsole } from '../../../gateway/console/route.ts'
import { registerErrorHandling } from '../../../gateway/errors.ts'

/** The console's files from a directory of the test's own: a checkout where `npm run build` has not run. */
describe('console route', () => {
  let dir: string | undefined
  afterEach(async () => {
    if (dir) await rm(dir, { recursive: true, force: true })
    dir = undefined
  })

  async function consoleFrom(files: Record<string, string>) {
    dir = await mkdtemp(path.join(os.tmpdir(), 'ar-console-'))
    for (const [name, text] of Object.entries(files)) {
      await mkdir(path.join(dir, path.dirname(name)), { recursive: true })
      await writeFile(path.join(dir, name), text)
    }
    const app = fastify()
    registerErrorHandling(app, { log: pino({ level: 'silent' }), retryAfterMs: 5_000 })
    await registerConsole(app, pathToFileURL(`${dir}/`))
    return app
  }

  it('console - not built: the page is a 503 CONSOLE_NOT_BUILT in the service error shape, saying how to build it', async () => {
    const app = await consoleFrom({ 'index.html': '<!doctype html><script src="/console/app.js"></script>' })
    const page = await app.inject({ method: 'GET', url: '/' })
    expect(page.statusCode).toBe(503)
    expect(page.json()).toMatchObject({ code: 'CONSOLE_NOT_BUILT', message: expect.stringContaining('npm run build') })
    const script = await app.inject({ method: 'GET', url: '/console/app.js' })
    expect(script.statusCode).toBe(404)
    expect(script.json()).toMatchObject({ code: 'ROUTE_NOT_FOUND' })
  })

  it('console - built: the page and its script, with the security headers', async () => {
    const app = await consoleFrom({ 'index.html': '<!doctype html>page', 'style.css': 'body{}', 'dist/app.js': 'console.log(1)', 'dist/app.js.map': '{}' })
    const page = await app.inject({ method: 'GET', url: '/' })
    expect(page.statusCode).toBe(200)
    expect(page.body).toBe('<!doctype html>page')
    expect(page.headers['content-security-policy']).toContain("script-src 'self'")
    expect((await app.inject({ method: 'GET', url: '/console/app.js' })).body).toBe('console.log(1)')
  })
})
