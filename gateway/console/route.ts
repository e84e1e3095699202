import { readFile } from 'node:fs/promises'
import type { FastifyInstance, FastifyReply } from 'fastify'
import { ServiceError } from '../../contract/mod.ts'
import { OPEN_ROUTE } from '../route-config.ts'

/**
 * The web console (client/console/): one static page, its stylesheet and its
 * bundled script (`npm run build` writes client/console/dist/app.js). The
 * files are open, like any page: the key is typed into the page and sent
 * only with its API calls (REST `Authorization`, WebSocket `?api_key=`), which
 * the guard checks as it checks any client's. The page runs only its own
 * script and talks only to its own origin (CSP); that origin must be in
 * `auth.allowed_origins`, since a browser's WebSocket carries an Origin.
 */
const CONSOLE_DIR = new URL('../../client/console/', import.meta.url)

const SECURITY_HEADERS = {
  'content-security-policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'cache-control': 'no-cache',
}

const FILES = [
  { url: '/', file: 'index.html', type: 'text/html; charset=utf-8' },
  { url: '/console/style.css', file: 'style.css', type: 'text/css; charset=utf-8' },
  { url: '/console/app.js', file: 'dist/app.js', type: 'text/javascript; charset=utf-8' },
  { url: '/console/app.js.map', file: 'dist/app.js.map', type: 'application/json' },
]

/** Registers the console's files, read once here; without the bundle the page says how to build it. */
export async function registerConsole(app: FastifyInstance, dir: URL = CONSOLE_DIR): Promise<void> {
  const missing = await readFile(new URL('dist/app.js', dir)).then(
    () => false,
    () => true,
  )
  for (const { url, file, type } of FILES) {
    const body = await readFile(new URL(file, dir)).catch(() => undefined)
    app.get(url, { config: OPEN_ROUTE }, async (_request, reply: FastifyReply) => {
      reply.headers(SECURITY_HEADERS)
      // In the service's error shape, like every other answer of its own routes.
      if (missing && url === '/')
        throw new ServiceError('CONSOLE_NOT_BUILT', 'the web console is not built: run `npm run build` (npm start does), then restart the service')
      if (body === undefined) throw new ServiceError('ROUTE_NOT_FOUND', `the web console has no ${file} (run \`npm run build\`)`)
      return reply.type(type).send(body)
    })
  }
}
