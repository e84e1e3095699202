import { describe, expect, it } from 'vitest'
import { bwrapArgs, isWithin, planMounts, type MountInput, type PathKind } from '../../../runner/sandbox-exec/bwrap-args.ts'

const dirs = new Set([
  '/tmp/ci/app',
  '/tmp/ci/app/data/sessions',
  '/tmp/ci/app/data/sessions/s1',
  '/tmp/ci/app/data/markers',
  '/home/me',
  '/home/me/app',
  '/home/me/app/data/sessions',
  '/home/me/app/data/sessions/s1',
  '/home/me/app/data/markers',
  '/srv/base',
  '/srv/base/s1',
  '/srv/state/k1',
  '/tmp/ar-waf-x',
])
const files = new Set(['/home/me/.local/bin/claude', '/home/me/app/config.yaml', '/etc/shadow', '/home/me/.claude/.credentials.json'])
const kindOf = (p: string): PathKind => (dirs.has(p) ? 'dir' : files.has(p) ? 'file' : undefined)
const input = (over: Partial<MountInput>): MountInput => ({ hideBroad: [], reveal: [], hideData: [], readWrite: [], readOnly: [], ...over })

describe('sandbox mounts', () => {
  it.each([
    {
      name: 'a hidden HOME, the code and CLI under it revealed, the data inside the code hidden again',
      input: input({
        hideBroad: ['/home/me'],
        reveal: ['/home/me/app', '/home/me/.local/bin/claude', '/usr/bin/node'],
        hideData: ['/home/me/app/data/sessions', '/home/me/app/data/markers', '/home/me/app/config.yaml'],
        readWrite: ['/home/me/app/data/sessions/s1'],
      }),
      mounts: [
        { kind: 'tmpfs', path: '/home/me' },
        { kind: 'ro', source: '/home/me/app', dest: '/home/me/app' },
        { kind: 'ro', source: '/home/me/.local/bin/claude', dest: '/home/me/.local/bin/claude' },
        { kind: 'hide-file', path: '/home/me/app/config.yaml' },
        { kind: 'tmpfs', path: '/home/me/app/data/markers' },
        { kind: 'tmpfs', path: '/home/me/app/data/sessions' },
        { kind: 'rw', path: '/home/me/app/data/sessions/s1' },
      ],
    },
    {
      name: 'data outside HOME is hidden; data under a hidden HOME and no reveal is not mounted twice',
      input: input({
        hideBroad: ['/home/me'],
        hideData: ['/srv/base', '/home/me/app/data/markers', '/etc/shadow', '/missing'],
        readWrite: ['/srv/base/s1', '/srv/state/k1'],
      }),
      mounts: [
        { kind: 'tmpfs', path: '/home/me' },
        { kind: 'hide-file', path: '/etc/shadow' },
        { kind: 'tmpfs', path: '/srv/base' },
        { kind: 'rw', path: '/srv/base/s1' },
        { kind: 'rw', path: '/srv/state/k1' },
      ],
    },
    {
      name: 'paths under the private /tmp need no hide; the WAF directory and credentials are bound read-only last',
      input: input({
        hideData: ['/tmp/ar-stack/sessions'],
        readWrite: ['/srv/base/s1'],
        readOnly: [
          { source: '/tmp/ar-waf-x', dest: '/tmp/ar-waf-x' },
          { source: '/home/me/.claude/.credentials.json', dest: '/srv/state/k1/.claude/.credentials.json' },
          { source: '/missing', dest: '/x' },
        ],
      }),
      mounts: [
        { kind: 'rw', path: '/srv/base/s1' },
        { kind: 'ro', source: '/tmp/ar-waf-x', dest: '/tmp/ar-waf-x' },
        { kind: 'ro', source: '/home/me/.claude/.credentials.json', dest: '/srv/state/k1/.claude/.credentials.json' },
      ],
    },
    {
      name: 'the code root in the private /tmp (a checkout there), revealed: the data inside it is hidden again',
      input: input({
        reveal: ['/tmp/ci/app'],
        hideData: ['/tmp/ci/app/data/sessions', '/tmp/ci/app/data/markers'],
        readWrite: ['/tmp/ci/app/data/sessions/s1'],
      }),
      mounts: [
        { kind: 'ro', source: '/tmp/ci/app', dest: '/tmp/ci/app' },
        { kind: 'tmpfs', path: '/tmp/ci/app/data/markers' },
        { kind: 'tmpfs', path: '/tmp/ci/app/data/sessions' },
        { kind: 'rw', path: '/tmp/ci/app/data/sessions/s1' },
      ],
    },
  ])('plan - $name', ({ input, mounts }) => {
    expect(planMounts(input, kindOf)).toEqual(mounts)
  })

  it('args - system read-only, private dirs, hidden dirs read-only, namespaces, no capabilities; the network only when open', () => {
    const mounts = planMounts(input({ hideData: ['/srv/base'], readWrite: ['/srv/base/s1'] }), kindOf)
    const args = bwrapArgs(mounts, 'allowlist', '/srv/base/s1')
    expect(args.slice(0, 7)).toEqual(['--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc'])
    expect(args.join(' ')).toContain('--tmpfs /tmp --tmpfs /var/tmp --tmpfs /run --tmpfs /srv/base --bind /srv/base/s1 /srv/base/s1 --remount-ro /srv/base')
    for (const flag of ['--unshare-pid', '--unshare-ipc', '--unshare-net', '--die-with-parent', '--new-session']) expect(args).toContain(flag)
    expect(args.join(' ')).toContain('--cap-drop ALL --chdir /srv/base/s1')
    expect(bwrapArgs(mounts, 'none', '/x')).toContain('--unshare-net')
    expect(bwrapArgs(mounts, 'open', '/x')).not.toContain('--unshare-net')
  })

  it.each([
    ['/a/b', '/a', true],
    ['/a', '/a', true],
    ['/ab', '/a', false],
    ['/x', '/', true],
  ])('within - %s in %s: %s', (child, parent, expected) => {
    expect(isWithin(child, parent)).toBe(expected)
  })
})
