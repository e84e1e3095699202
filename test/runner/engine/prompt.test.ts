import { describe, expect, it } from 'vitest'
import { startInstructions, TurnPrompts, withInstructions } from '../../../runner/engine/prompt.ts'

const wrapped = (instructions: string, prompt: string) => `<instructions>\n${instructions}\n</instructions>\n\n${prompt}`

describe("prompt - how a turn's instructions reach the CLI", () => {
  it('withInstructions - the instructions in their own block before the prompt', () => {
    expect(withInstructions('hi', 'be brief')).toBe('<instructions>\nbe brief\n</instructions>\n\nhi')
  })

  it.each([
    ['a new conversation starts with its instructions', { resume: false, instructions: 'be brief' }, 'be brief'],
    ['a new one without instructions', { resume: false }, undefined],
    ['a resumed one has its own already', { resume: true, instructions: 'be brief' }, undefined],
  ])('startInstructions - %s', (_name, options, expected) => {
    expect(startInstructions(options)).toBe(expected)
  })

  it.each<[string, string | undefined, [string, string | undefined][], string[]]>([
    [
      'turns without instructions send their prompts',
      'sys',
      [
        ['a', undefined],
        ['b', undefined],
      ],
      ['a', 'b'],
    ],
    ["the conversation's own instructions are not sent again", 'sys', [['a', 'sys']], ['a']],
    [
      'other instructions go with the turn, once',
      'sys',
      [
        ['a', 'new'],
        ['b', 'new'],
        ['c', undefined],
      ],
      [wrapped('new', 'a'), 'b', 'c'],
    ],
    [
      'instructions changed back go with the turn again',
      'sys',
      [
        ['a', 'new'],
        ['b', 'sys'],
      ],
      [wrapped('new', 'a'), wrapped('sys', 'b')],
    ],
    [
      "a conversation with none: the first turn's instructions go with it",
      undefined,
      [
        ['a', 'sys'],
        ['b', 'sys'],
      ],
      [wrapped('sys', 'a'), 'b'],
    ],
  ])('TurnPrompts - %s', (_name, conversation, turns, expected) => {
    const prompts = new TurnPrompts(conversation)
    expect(turns.map(([prompt, instructions]) => prompts.text(prompt, instructions))).toEqual(expected)
  })
})
