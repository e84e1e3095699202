import { describe, expect, it } from 'vitest'
import { choiceOfLine, decisionOfLine, firstOptions, permissionText, questionText, unattendedText } from '../../../client/cli/steering.ts'
import type { PermissionRequested, QuestionAsked } from '../../../client/steering.ts'
import type { QuestionItem } from '../../../contract/steering.ts'
import { asked, question } from '../steering-events.ts'

const colour: QuestionItem = {
  question: 'Which colour?',
  header: 'Colour',
  options: [{ label: 'Red', description: 'warm' }, { label: 'Blue' }],
  multi_select: false,
}
const toppings: QuestionItem = { question: 'Toppings?', options: [{ label: 'Cheese' }, { label: 'Ham' }, { label: 'Olives' }], multi_select: true }

describe('cli steering - what a typed line means', () => {
  it.each([
    ['y', 'allow_once'],
    [' Yes\n', 'allow_once'],
    ['a', 'allow_always'],
    ['always', 'allow_always'],
    ['n', 'deny'],
    ['NO', 'deny'],
    ['', undefined],
    ['maybe', undefined],
  ])('cli steering - %j is %s', (line, decision) => {
    expect(decisionOfLine(line)).toBe(decision)
  })

  it.each([
    { line: '1', item: colour, labels: ['Red'] },
    { line: ' 2 ', item: colour, labels: ['Blue'] },
    { line: '3', item: colour, labels: undefined },
    { line: '0', item: colour, labels: undefined },
    { line: '1,2', item: colour, labels: undefined },
    { line: 'Green please', item: colour, labels: ['Green please'] },
    { line: '', item: colour, labels: undefined },
    { line: '1,3', item: toppings, labels: ['Cheese', 'Olives'] },
    { line: '3 1 3', item: toppings, labels: ['Olives', 'Cheese'] },
    { line: '2, 4', item: toppings, labels: undefined },
  ])('cli steering - $line for "$item.question" chooses $labels', ({ line, item, labels }) => {
    expect(choiceOfLine(line, item)).toEqual(labels)
  })

  it('cli steering - --approve picks the first option of each question; none without options', () => {
    expect(firstOptions([colour, toppings])).toEqual([['Red'], ['Cheese']])
    expect(firstOptions([colour, { question: 'Free?', options: [], multi_select: false }])).toBeUndefined()
  })
})

describe('cli steering - what the terminal shows', () => {
  it('cli steering - a permission request names the tool, its title and its input', () => {
    const text = permissionText(asked('per_1', 1) as PermissionRequested)
    expect(text).toContain('Bash wants to run: touch canary')
    expect(text).toContain('"command":"touch canary"')
  })

  it('cli steering - a question lists its options numbered', () => {
    expect(questionText(colour)).toBe('question (Colour): Which colour?\n  1. Red — warm\n  2. Blue\n')
  })

  it('cli steering - with no terminal: the request, then how to answer it over HTTP or with --approve', () => {
    const permission = unattendedText('s1', asked('per_1', 1) as PermissionRequested)
    expect(permission).toContain('POST /v1/sessions/s1/reply {"permission_id":"per_1","decision":"allow_once"}')
    expect(permission).toContain('--approve')
    expect(permission).toContain('denied')
    const asking = unattendedText('s1', question('que_1', 1) as QuestionAsked)
    expect(asking).toContain('1. Red')
    expect(asking).toContain('{"question_id":"que_1","answers":[["<label>"]]}')
    expect(asking).toContain('rejected')
  })
})
