import { describe, expect, it } from 'vitest'
import { Command, SessionId } from '../../contract/mod.ts'

describe('session id', () => {
  it.each([
    ['a lone high surrogate at the end', 'x\ud800'],
    ['a lone low surrogate', '\udc00y'],
    ['a reversed pair', 'x\ude00\ud83d'],
  ])('session id - %s is refused with a message that says why', (_, id) => {
    const result = SessionId.safeParse(id)
    expect(result.success).toBe(false)
    expect(result.error?.issues[0]?.message).toMatch(/well-formed/)
  })

  it.each([
    ['ascii', 'x'],
    ['the replacement character itself', 'x\ufffd'],
    ['a surrogate pair (emoji)', 'x\ud83d\ude00'],
    ['256 characters', 'a'.repeat(256)],
    ['256 three-byte characters', '€'.repeat(256)],
  ])('session id - %s is accepted', (_, id) => {
    expect(SessionId.safeParse(id).success).toBe(true)
  })

  it('session id - every command refuses an id with a lone surrogate', () => {
    expect(Command.safeParse({ type: 'execute', session_id: 'x\ud800', turn_id: 't', prompt: 'p' }).success).toBe(false)
    expect(Command.safeParse({ type: 'close', session_id: 'x\ud800' }).success).toBe(false)
    expect(Command.safeParse({ type: 'execute', session_id: 'x\ufffd', turn_id: 't', prompt: 'p' }).success).toBe(true)
  })
})
