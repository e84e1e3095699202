/**
 * `npm run build`: bundles the web console (client/console/app.ts with the
 * typed client, the contract and zod) into client/console/dist/app.js, which
 * the gateway serves at `/` (gateway/console/). Run by `npm start` and by the
 * console's browser test; the gateway image must run it too.
 */
import { mkdir, mkdtemp, rename, rm } from 'node:fs/promises'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { build } from 'rolldown'

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')

/**
 * Writes the bundle; resolves to its path. It is built in a folder of its own and renamed into
 * place, so a page served meanwhile (tests build it side by side) never reads a half-written file.
 */
export async function buildConsole(): Promise<string> {
  const dist = path.join(ROOT, 'client/console/dist')
  const file = path.join(dist, 'app.js')
  await mkdir(dist, { recursive: true })
  const scratch = await mkdtemp(path.join(dist, '.build-'))
  try {
    await build({
      input: path.join(ROOT, 'client/console/app.ts'),
      platform: 'browser',
      logLevel: 'warn',
      output: { file: path.join(scratch, 'app.js'), format: 'esm', minify: true, sourcemap: true },
    })
    await rename(path.join(scratch, 'app.js.map'), `${file}.map`)
    await rename(path.join(scratch, 'app.js'), file)
  } finally {
    await rm(scratch, { recursive: true, force: true })
  }
  return file
}

if (import.meta.url === `file://${process.argv[1]}`) {
  console.log(`console bundle: ${path.relative(ROOT, await buildConsole())}`)
}
