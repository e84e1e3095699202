import { describe, expect, it } from 'vitest'
import { ascendingIds, sequentialIds } from '../../../gateway/opencode/ids.ts'

describe('opencode ids', () => {
  it('ascendingIds - prefixed, and each id sorts after the one before, within and across milliseconds', () => {
    let now = 1_795_288_290_000
    const ids = ascendingIds(() => now)
    const made: string[] = []
    for (let i = 0; i < 50; i++) {
      if (i % 10 === 0) now += 1
      made.push(ids('prt'))
    }
    expect(made.every((id) => /^prt_[0-9a-f]{12}[0-9A-Za-z]{14}$/.test(id))).toBe(true)
    expect([...made].sort()).toEqual(made)
    expect(new Set(made).size).toBe(made.length)
  })

  it('sequentialIds - counts per prefix', () => {
    const ids = sequentialIds()
    expect([ids('msg'), ids('prt'), ids('msg')]).toEqual(['msg_1', 'prt_1', 'msg_2'])
  })
})
