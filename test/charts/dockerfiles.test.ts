import { readFile } from 'node:fs/promises'
import path from 'node:path'
import { validate, ValidationCode } from 'dockerfile-utils'
import { describe, expect, test } from 'vitest'
import { NODE_FLAGS } from '../../bin/node-flags.ts'
import { ROOT } from './render.ts'

/** Instructions of a Dockerfile, continuation lines joined. */
function instructions(text: string): string[] {
  return text
    .replace(/\\\n/g, ' ')
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'))
}

describe('dockerfiles - lint and conventions', () => {
  test('the linter finds problems (it is not a no-op)', () => {
    const problems = validate('FROM node:24 AS a\nFROM node AS a\nHEALTHCHECK --interval=5x CMD true\n')
    expect(problems.map((p) => p.code)).toEqual(expect.arrayContaining([ValidationCode.DUPLICATE_BUILD_STAGE_NAME, ValidationCode.FLAG_UNKNOWN_UNIT]))
  })

  test.each([
    // file, its FROM lines, each image target's stage holding its node_modules
    [
      'Dockerfile.gateway',
      [
        'FROM ${BASE_IMAGE} AS deps',
        'FROM deps AS console',
        'FROM deps AS gateway-deps',
        'FROM ${BASE_IMAGE} AS base',
        'FROM base AS controller',
        'FROM base AS gateway',
      ],
      ['deps', 'gateway-deps'],
    ],
    ['Dockerfile.runner', ['FROM ${BASE_IMAGE} AS deps', 'FROM ${BASE_IMAGE}'], ['deps']],
  ])('%s: no lint findings; multi-stage, base image as a build argument, production deps only, non-root', async (file, froms, depsStages) => {
    const text = await readFile(path.join(ROOT, file), 'utf8')
    expect(validate(text)).toEqual([])
    const lines = instructions(text)
    expect(lines[0]).toMatch(/^ARG BASE_IMAGE=node:24-slim$/)
    expect(lines.filter((l) => l.startsWith('FROM '))).toEqual(froms)
    expect(lines).toContainEqual(expect.stringMatching(/^RUN npm ci --omit=dev /))
    expect(lines.filter((l) => l.startsWith('COPY --from=') && l.includes('node_modules'))).toEqual(
      depsStages.map((stage) => `COPY --from=${stage} /app/node_modules ./node_modules`),
    )
    const users = lines.filter((l) => l.startsWith('USER '))
    expect(users).toEqual(depsStages.map(() => 'USER 10001:10001'))
    expect(lines.indexOf(users[0]!)).toBeGreaterThan(lines.findLastIndex((l) => l.startsWith('RUN ')))
    expect(lines).toContainEqual(`ENTRYPOINT ${JSON.stringify(['node', ...NODE_FLAGS, '/app/bin/agent-runtime.ts']).replaceAll(',', ', ')}`)
  })

  test('only the controller image gets the Kubernetes client (a peer dependency): the gateway and runner omit it', async () => {
    const pkg = JSON.parse(await readFile(path.join(ROOT, 'package.json'), 'utf8'))
    expect(Object.keys(pkg.peerDependencies)).toEqual(['@kubernetes/client-node'])
    expect(pkg.dependencies['@kubernetes/client-node']).toBeUndefined()
    const gateway = instructions(await readFile(path.join(ROOT, 'Dockerfile.gateway'), 'utf8'))
    expect(gateway).toContainEqual(expect.stringMatching(/^RUN npm prune --omit=dev --omit=peer /))
    expect(gateway.at(-1)).toBe('CMD ["gateway"]')
    expect(gateway[gateway.indexOf('FROM base AS controller') + 1]).toBe('COPY --from=deps /app/node_modules ./node_modules')
    const runner = instructions(await readFile(path.join(ROOT, 'Dockerfile.runner'), 'utf8'))
    expect(runner).toContainEqual(expect.stringMatching(/^RUN npm ci --omit=dev --omit=peer /))
  })

  test('the gateway image carries the web console bundle, built with rolldown at the dev dependency version', async () => {
    const text = await readFile(path.join(ROOT, 'Dockerfile.gateway'), 'utf8')
    const pkg = JSON.parse(await readFile(path.join(ROOT, 'package.json'), 'utf8'))
    expect(text).toContain(`ARG ROLLDOWN_VERSION=${String(pkg.devDependencies.rolldown).replace(/^[\^~]/, '')}`)
    const lines = instructions(text)
    expect(lines).toContainEqual('RUN node scripts/build-console.ts')
    expect(lines.slice(lines.indexOf('FROM base AS gateway'))).toContainEqual('COPY --from=console /app/client/console/dist ./client/console/dist')
    expect((await readFile(path.join(ROOT, '.dockerignore'), 'utf8')).split('\n')).toContain('!scripts/build-console.ts')
  })

  test('the runner image carries the agent CLI at the dev dependency version', async () => {
    const text = await readFile(path.join(ROOT, 'Dockerfile.runner'), 'utf8')
    const pkg = JSON.parse(await readFile(path.join(ROOT, 'package.json'), 'utf8'))
    const pinned = String(pkg.devDependencies['@anthropic-ai/claude-code']).replace(/^[\^~]/, '')
    expect(text).toContain(`ARG CLAUDE_CODE_VERSION=${pinned}`)
    expect(text).toContain('npm install -g --omit=dev --no-audit --no-fund "@anthropic-ai/claude-code@${CLAUDE_CODE_VERSION}"')
    expect(instructions(text).at(-1)).toBe('CMD ["runner"]')
  })

  test('the runner image carries what the session sandbox needs (bubblewrap, socat for the network forwarder)', async () => {
    const apt = instructions(await readFile(path.join(ROOT, 'Dockerfile.runner'), 'utf8')).find((l) => l.includes('apt-get install'))
    expect(apt?.split(/\s+/)).toEqual(expect.arrayContaining(['bubblewrap', 'socat']))
  })

  test('.dockerignore keeps tests, tools and local state out of the images', async () => {
    const ignored = (await readFile(path.join(ROOT, '.dockerignore'), 'utf8')).split('\n')
    for (const entry of ['.git', '.tools', 'node_modules', 'test', 'bench', 'charts', 'data']) expect(ignored).toContain(entry)
  })
})
