import { describe, expect, it } from 'vitest'
import { Callback, SendBody, sendBody, sessionKey, TextCallback, toChatMessage } from '../../../gateway/chat/wire.ts'
import { textCallback } from '../../fixtures/chat.ts'

describe('chat wire', () => {
  it('wire - a text callback is stored as §2.9 says', () => {
    const message = toChatMessage(TextCallback.parse(textCallback('hi there')))
    expect(message).toEqual({
      user_id: 'user-1',
      content: 'hi there',
      metadata: { conversation_id: 'cid-1', robot_code: 'robot-1' },
      sender_nick: 'Ada',
    })
    expect(sessionKey(message)).toBe('cid-1:user-1')
  })

  it.each([
    ['absent', undefined],
    ['empty', ''],
    ['blank', '   '],
  ])('wire - a robotCode that is %s is not stored', (_name, robotCode) => {
    const message = toChatMessage(TextCallback.parse(textCallback('x', { robotCode })))
    expect(message.metadata).toEqual({ conversation_id: 'cid-1' })
  })

  it('wire - unknown callback fields are tolerated', () => {
    expect(Callback.parse({ msgtype: 'picture', content: { downloadCode: 'x' }, createAt: 1 }).msgtype).toBe('picture')
  })

  it.each([
    ['no conversationId', { conversationId: undefined }, 'conversationId'],
    ['no senderId', { senderId: '' }, 'senderId'],
    ['no text', { text: undefined }, 'text'],
    ['text without content', { text: {} }, 'text.content'],
  ])('wire - a text callback with %s is rejected naming the field', (_name, overrides, path) => {
    const result = TextCallback.safeParse(textCallback('x', overrides))
    expect(result.success).toBe(false)
    expect(result.error?.issues[0]?.path.join('.')).toBe(path)
  })

  it.each([
    {
      format: 'text' as const,
      body: { msgtype: 'text', text: { content: 'hello' }, userIds: ['user-1'] },
    },
    {
      format: 'markdown' as const,
      body: { msgtype: 'markdown', markdown: { title: 'Agent reply', text: 'hello' }, userIds: ['user-1'] },
    },
  ])('wire - $format body shape', ({ format, body }) => {
    const built = sendBody(format, 'hello', 'user-1', 'Agent reply')
    expect(built).toEqual(body)
    expect(SendBody.parse(built)).toEqual(body)
  })
})
