/**
 * `npm run build`: bundles the web console (client/console/app.ts with the
 * typed client, the contract and zod) into client/console/dist/app.js, which
 * the gateway serves at `/` (gateway/console/). Run by `npm start` and by the
 * console's browser test; the gateway image must run it too.
 */
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { build } from 'rolldown'

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')

/** Writes the bundle; resolves to its path. */
export async function buildConsole(): Promise<string> {
  const file = path.join(ROOT, 'client/console/dist/app.js')
  await build({
    input: path.join(ROOT, 'client/console/app.ts'),
    platform: 'browser',
    logLevel: 'warn',
    output: { file, format: 'esm', minify: true, sourcemap: true },
  })
  return file
}

if (import.meta.url === `file://${process.argv[1]}`) {
  console.log(`console bundle: ${path.relative(ROOT, await buildConsole())}`)
}
