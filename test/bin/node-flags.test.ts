import { readFile } from 'node:fs/promises'
import path from 'node:path'
import { describe, expect, test } from 'vitest'
import { NODE_FLAGS } from '../../bin/node-flags.ts'

const ROOT = path.resolve(import.meta.dirname, '../..')
const read = (file: string) => readFile(path.join(ROOT, file), 'utf8')

describe("the service's node flags are the same wherever it is started", () => {
  test('the list is not empty (else every check below passes on nothing)', () => {
    expect(NODE_FLAGS.length).toBeGreaterThan(0)
  })

  test('npm start', async () => {
    const { scripts } = JSON.parse(await read('package.json')) as { scripts: Record<string, string> }
    expect(scripts.start).toContain(`node ${NODE_FLAGS.join(' ')} bin/agent-runtime.ts dev`)
  })

  test("the bin's shebang (npx agent-runtime)", async () => {
    expect((await read('bin/agent-runtime.ts')).split('\n')[0]).toBe(`#!/usr/bin/env -S node ${NODE_FLAGS.join(' ')}`)
  })

  test.each(['Dockerfile.gateway', 'Dockerfile.runner'])('%s ENTRYPOINT', async (file) => {
    const entrypoints = (await read(file)).split('\n').filter((line) => line.startsWith('ENTRYPOINT '))
    expect(entrypoints).toEqual([`ENTRYPOINT ${JSON.stringify(['node', ...NODE_FLAGS, '/app/bin/agent-runtime.ts']).replaceAll(',', ', ')}`])
  })
})
