import { mkdir, mkdtemp, readdir, realpath, rename, rm, symlink } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { beforeAll, describe, expect, it } from 'vitest'
import { ServiceError } from '../../contract/mod.ts'
import { isInside } from '../../contract/mod.ts'
import { resolveSandbox, sandboxLabel, sessionPathName, verifySandbox } from '../../runner/sandbox.ts'

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

  it('sandbox - ids that differ only where one has a lone surrogate never share a sandbox', async () => {
    const err = await resolveSandbox(base, 'x\ud800', undefined).catch((e: unknown) => e)
    expect(err).toBeInstanceOf(ServiceError)
    expect((err as ServiceError).code).toBe('BAD_REQUEST')
    expect(await resolveSandbox(base, 'x\ufffd', undefined)).toBe(path.join(base, '~' + Buffer.from('x\ufffd').toString('base64url')))
  })

  const longIds = [
    ['201 safe characters', 'a'.repeat(201)],
    ['256 safe characters', 'b'.repeat(256)],
    ['256 characters with a space', ' '.repeat(256)],
    ['256 three-byte characters', '€'.repeat(256)],
    ['128 emoji (256 UTF-16 code units, 512 bytes)', '\u{1F600}'.repeat(128)],
    ['256 characters that differ from the last only at the end', '€'.repeat(255) + 'x'],
  ]

  it.each(longIds)('sandbox - an id of %s gets a sandbox of its own', async (_, id) => {
    const dir = await resolveSandbox(base, id, undefined)
    expect(path.dirname(dir)).toBe(base)
    expect(Buffer.byteLength(path.basename(dir))).toBeLessThanOrEqual(250)
  })

  it('sandbox - long ids map to distinct names', () => {
    const names = new Set(longIds.map(([, id]) => sessionPathName(id!)))
    expect(names.size).toBe(longIds.length)
  })

  it.each([
    ['s1', 's1'],
    ['a'.repeat(200), 'a'.repeat(200)],
    ['a/b c', '~' + Buffer.from('a/b c').toString('base64url')],
    // 186 bytes → 248 characters of base64url: the longest names ids had before stay theirs.
    ['é'.repeat(93), '~' + Buffer.from('é'.repeat(93)).toString('base64url')],
  ])('sandbox - the id %j keeps the directory name it always had', (id, name) => {
    expect(sessionPathName(id)).toBe(name)
  })

  it('sandbox - a refusal names paths relative to the base, never the absolute base', async () => {
    for (const requested of ['..', '/etc', 'link-out', 'link-out/deeper']) {
      const err = (await resolveSandbox(base, 's', requested).catch((e: unknown) => e)) as ServiceError
      expect(err.code).toBe('WORK_DIR_REJECTED')
      expect(err.message).not.toContain(base)
      expect(err.message).not.toContain(path.dirname(base))
    }
  })

  it('sandbox - a work_dir through a file is refused without naming server paths', async () => {
    await resolveSandbox(base, 's', 'has-file')
    const { writeFile } = await import('node:fs/promises')
    await writeFile(path.join(base, 'has-file', 'f'), 'x')
    const err = (await resolveSandbox(base, 's', 'has-file/f/below').catch((e: unknown) => e)) as ServiceError
    expect(err).toBeInstanceOf(ServiceError)
    expect(err.code).toBe('WORK_DIR_REJECTED')
    expect(err.message).not.toContain(base)
  })

  it('sandbox - a default sandbox replaced by a symlink to another sandbox inside the base is refused', async () => {
    const victim = await resolveSandbox(base, 'victim', undefined)
    await symlink(victim, path.join(base, 'intruder'))
    const err = (await resolveSandbox(base, 'intruder', undefined).catch((e: unknown) => e)) as ServiceError
    expect(err).toBeInstanceOf(ServiceError)
    expect(err.code).toBe('WORK_DIR_REJECTED')
  })

  it('sandbox - a label names a sandbox relative to the base, never absolute', async () => {
    expect(await sandboxLabel(base, path.join(base, 'team', 'p'))).toBe('team/p')
    expect(await sandboxLabel(base, base)).toBe('.')
    expect(await sandboxLabel(base, outside)).toBe('(outside the sandbox base)')
  })

  describe('verify before each start', () => {
    it('sandbox - an untouched sandbox passes', async () => {
      const dir = await resolveSandbox(base, 'v-ok', undefined)
      await expect(verifySandbox(base, dir)).resolves.toBe(dir)
    })

    it('sandbox - a sandbox replaced by a symlink pointing outside the base is refused', async () => {
      const dir = await resolveSandbox(base, 'v-out', undefined)
      await rm(dir, { recursive: true })
      await symlink(outside, dir)
      const err = (await verifySandbox(base, dir).catch((e: unknown) => e)) as ServiceError
      expect(err).toBeInstanceOf(ServiceError)
      expect(err.code).toBe('WORK_DIR_REJECTED')
      expect(err.message).not.toContain(base)
      expect(err.message).not.toContain(outside)
    })

    it('sandbox - a sandbox replaced by a symlink to another sandbox inside the base is refused', async () => {
      const other = await resolveSandbox(base, 'v-other', undefined)
      const dir = await resolveSandbox(base, 'v-in', undefined)
      await rm(dir, { recursive: true })
      await symlink(other, dir)
      const err = (await verifySandbox(base, dir).catch((e: unknown) => e)) as ServiceError
      expect(err.code).toBe('WORK_DIR_REJECTED')
    })

    it('sandbox - a sandbox whose parent inside the base became a symlink out is refused, and nothing is created outside', async () => {
      const dir = await resolveSandbox(base, 'v-parent', 'team-p/project')
      await rename(path.join(base, 'team-p'), path.join(base, 'team-p-moved'))
      await symlink(outside, path.join(base, 'team-p'))
      const err = (await verifySandbox(base, dir).catch((e: unknown) => e)) as ServiceError
      expect(err.code).toBe('WORK_DIR_REJECTED')
      expect(await readdir(outside)).not.toContain('project')
    })

    it('sandbox - a deleted sandbox is created again', async () => {
      const dir = await resolveSandbox(base, 'v-gone', undefined)
      await rm(dir, { recursive: true })
      await expect(verifySandbox(base, dir)).resolves.toBe(dir)
      expect((await readdir(base)).includes('v-gone')).toBe(true)
    })

    it('sandbox - a directory recorded outside the base is refused', async () => {
      const err = (await verifySandbox(base, outside).catch((e: unknown) => e)) as ServiceError
      expect(err.code).toBe('WORK_DIR_REJECTED')
    })
  })
})
