import { z } from 'zod'
import { describe, expect, it } from 'vitest'
import { invalidFieldMessage } from '../../gateway/errors.ts'

const Body = z.object({
  prompt: z.string().min(1, 'prompt must not be empty'),
  model: z.object({ providerID: z.string() }).optional(),
  parts: z.array(z.object({ text: z.string() })).optional(),
})

const messageFor = (input: unknown): string => {
  const result = Body.safeParse(input)
  if (result.success) throw new Error('expected a failure')
  return invalidFieldMessage(result.error.issues[0]!, input)
}

describe('validation messages', () => {
  it.each([
    ['absent', {}, 'field "prompt" is required'],
    ['undefined', { prompt: undefined }, 'field "prompt" is required'],
    ['a number', { prompt: 5 }, 'field "prompt": expected string, got number'],
    ['null', { prompt: null }, 'field "prompt": expected string, got null'],
    ['a list', { prompt: ['a'] }, 'field "prompt": expected string, got array'],
    ['an object', { prompt: { a: 1 } }, 'field "prompt": expected string, got object'],
    ['a boolean', { prompt: true }, 'field "prompt": expected string, got boolean'],
    ['empty', { prompt: '' }, 'field "prompt": prompt must not be empty'],
    ['a nested field absent', { prompt: 'p', model: {} }, 'field "model.providerID" is required'],
    ['a nested field of the wrong type', { prompt: 'p', model: { providerID: 1 } }, 'field "model.providerID": expected string, got number'],
    ['a list item of the wrong type', { prompt: 'p', parts: [{ text: 'a' }, { text: 2 }] }, 'field "parts.1.text": expected string, got number'],
    ['a parent of the wrong type', { prompt: 'p', model: 'm' }, 'field "model": expected object, got string'],
  ])('validation messages - a field %s', (_, input, message) => {
    expect(messageFor(input)).toBe(message)
  })

  it('validation messages - a failure of the whole input names it', () => {
    const result = Body.safeParse(7)
    expect(invalidFieldMessage(result.error!.issues[0]!, 7, 'frame')).toBe('field "frame": expected object, got number')
  })
})
