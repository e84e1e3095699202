import net from 'node:net'
import { chromium, type Browser, type Page } from 'playwright-core'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { buildConsole } from '../../../scripts/build-console.ts'
import { startStack, type Stack } from '../../fixtures/stack.ts'

/** Debian's chromium (`apt-get install chromium`; .ci/run installs it), driven by playwright-core. */
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium'
const KEY = 'console-test-key'

let browser: Browser
let stack: Stack | undefined
beforeAll(async () => {
  await buildConsole()
  // Root in CI containers: Chromium's own sandbox needs user namespaces it may not get there.
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] })
}, 60_000)
afterAll(() => browser?.close())
afterEach(async () => {
  await stack?.close()
  stack = undefined
})

async function freePort(): Promise<number> {
  const server = net.createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as net.AddressInfo
  await new Promise((resolve) => server.close(resolve))
  return port
}

/** A service with a key whose console's origin is allowed (or not). */
async function serviceWithConsole(allowOrigin: boolean): Promise<{ url: string; page: Page }> {
  const port = await freePort()
  const url = `http://127.0.0.1:${port}`
  stack = await startStack({ server: { port }, auth: { api_key: [KEY], allowed_origins: allowOrigin ? [url] : [] } })
  const page = await browser.newPage()
  const answer = await page.goto(url)
  expect(answer?.status()).toBe(200)
  expect(answer?.headers()['content-security-policy']).toContain("script-src 'self'")
  return { url, page }
}

async function signIn(page: Page, key: string): Promise<void> {
  await page.fill('#api-key', key)
  await page.click('#login button')
}

describe('console - the web console in a real headless browser', () => {
  it('console - a wrong key is refused; with the key: a turn runs, its tool call and answer appear, stop ends a running turn, the session is listed', async () => {
    const { page } = await serviceWithConsole(true)
    await signIn(page, 'not-the-key')
    await page.waitForSelector('#status:has-text("401")')

    await signIn(page, KEY)
    await page.waitForSelector('#status:has-text("signed in")')
    await page.click('#new-session')
    await page.waitForSelector('#status:has-text("connected")')
    const sessionId = await page.textContent('#session-id')

    await page.fill('#prompt', 'tool: echo hi')
    await page.click('#prompt-form button[type=submit]')
    await page.waitForSelector('.end.completed')
    expect(await page.textContent('.event.prompt')).toBe('> tool: echo hi')
    expect(await page.textContent('.event.tool pre.input')).toContain('"command": "echo hi"')
    expect((await page.textContent('.event.tool pre.output'))?.trim()).toBe('hi')
    expect(await page.locator('.event.answer').last().textContent()).toMatch(/Done\. The tool said: "?hi"?/)
    expect(await page.textContent('#stats')).toMatch(/^1 turns · /)

    await page.fill('#prompt', 'sleep: 30')
    await page.click('#prompt-form button[type=submit]')
    await page.waitForSelector('.event.tool pre.input:has-text("sleep 30")')
    await page.click('#stop')
    await page.waitForSelector('.end.stopped')
    expect(await page.textContent('.end.stopped')).toBe('stopped: stopped from the console')

    await page.evaluate(() => (document.getElementById('stats')!.textContent = ''))
    await page.click('#load-stats')
    await page.waitForSelector('#stats:has-text("tool calls")')
    await page.click('#refresh')
    await page.waitForSelector(`#sessions button:has-text("${sessionId}")`)
  })

  it('console - a page origin the service does not allow cannot open a session, and the page says which setting to change', async () => {
    const { page } = await serviceWithConsole(false)
    await signIn(page, KEY)
    await page.waitForSelector('#status:has-text("signed in")')
    await page.click('#new-session')
    await page.waitForSelector('#status:has-text("SERVICE_ALLOWED_ORIGINS")')
  })
})
