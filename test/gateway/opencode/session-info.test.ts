import { describe, expect, it } from 'vitest'
import { directoryFor, newSessionInfo, slugFor } from '../../../gateway/opencode/session-info.ts'

describe('opencode session info', () => {
  it.each([
    { base: '/srv/sessions', id: 'ses_1', workDir: undefined, expected: '/srv/sessions/ses_1' },
    { base: '/srv/sessions', id: 'ses_1', workDir: 'proj/a', expected: '/srv/sessions/proj/a' },
    { base: undefined, id: 'ses_1', workDir: undefined, expected: 'ses_1' },
    { base: undefined, id: 'a b', workDir: undefined, expected: '~YSBi' },
    { base: undefined, id: 'ses_1', workDir: 'w', expected: 'w' },
  ])('directoryFor($base, $id, $workDir)', ({ base, id, workDir, expected }) => {
    expect(directoryFor(base, id, workDir)).toBe(expected)
  })

  it('newSessionInfo - OpenCode fields, a default title and project', () => {
    const info = newSessionInfo({ id: 'ses_1', directory: '/d', now: Date.UTC(2026, 0, 2), version: '0.1.0' })
    expect(info).toEqual({
      id: 'ses_1',
      slug: slugFor('ses_1'),
      projectID: 'global',
      directory: '/d',
      title: 'New session - 2026-01-02T00:00:00.000Z',
      version: '0.1.0',
      time: { created: Date.UTC(2026, 0, 2), updated: Date.UTC(2026, 0, 2) },
    })
    expect(info.slug).toMatch(/^[a-z]+-[a-z]+$/)
    expect(newSessionInfo({ id: 'x', directory: '/d', title: 'Mine', now: 1, version: 'v' }).title).toBe('Mine')
  })
})
