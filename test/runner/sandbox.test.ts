import { mkdir, mkdtemp, realpath, symlink } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { beforeAll, describe, expect, it } from 'vitest'
import { ServiceError } from '../../contract/mod.ts'
import { isInside, resolveSandbox } from '../../runner/sandbox.ts'

describe('sandbox', () => {
  let base: string
  let outside: string
  beforeAll(async () => {
    const root = await realpath(await mkdtemp(path.join(os.tmpdir(), 'ar-sandbox-')))
    base = path.join(root, 'sessions')
    outside = path.join(root, 'elsewhere')
    await mkdir(base, { recursive: true })
    await mkdir(outside, { recursive: true })
    await symlink(outside, path.join(base, 'link-out'))
    await mkdir(path.join(base, 'real'), { recursive: true })
    await symlink(path.join(base, 'real'), path.join(base, 'link-in'))
  })

  it('sandbox - no work_dir gives a directory named after the session', async () => {
    expect(await resolveSandbox(base, 's1', undefined)).toBe(path.join(base, 's1'))
    expect(await resolveSandbox(base, 'a/b c', undefined)).toBe(path.join(base, '~' + Buffer.from('a/b c').toString('base64url')))
  })

  it.each([
    ['project', 'project'],
    ['team/project', 'team/project'],
    ['./x/../y', 'y'],
    ['link-in/sub', 'real/sub'],
  ])('sandbox - relative "%s" stays inside', async (requested, expected) => {
    expect(await resolveSandbox(base, 's', requested)).toBe(path.join(base, expected))
  })

  it('sandbox - an absolute path inside the base is allowed', async () => {
    expect(await resolveSandbox(base, 's', path.join(base, 'abs'))).toBe(path.join(base, 'abs'))
  })

  it.each([['..'], ['../elsewhere'], ['a/../../x'], ['/etc'], ['/tmp'], ['link-out'], ['link-out/deeper'], ['bad\0name']])(
    'sandbox - "%s" is rejected',
    async (requested) => {
      const err = await resolveSandbox(base, 's', requested).catch((e: unknown) => e)
      expect(err).toBeInstanceOf(ServiceError)
      expect((err as ServiceError).code).toBe('WORK_DIR_REJECTED')
    },
  )

  it.each([
    ['/a', '/a', true],
    ['/a', '/a/b', true],
    ['/a', '/ab', false],
    ['/a', '/', false],
    ['/a/b', '/a', false],
  ])('isInside(%s, %s) is %s', (b, t, expected) => {
    expect(isInside(b, t)).toBe(expected)
  })
})
