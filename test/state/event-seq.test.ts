import { describe, expect, it } from 'vitest'
import { eventSeq } from '../../state/event-seq.ts'

describe('event seq', () => {
  it.each([
    ['after the text', '{"event":"answer","data":"hi","session_id":"s","seq":7,"ts":1}', 7],
    ['first', '{"seq":12,"event":"answer","data":"hi"}', 12],
    ['last, before the closing brace', '{"event":"answer","seq":3}', 3],
    ['with spaces around the colon', '{ "event" : "answer" , "seq" : 4 }', 4],
    ['none', '{"event":"error","data":"lost","error":{"code":"SANDBOX_LOST","message":"x"}}', undefined],
    ["only in a nested object: not the event's", '{"event":"tool_use","tool":{"input":{"seq":9}}}', undefined],
    ["a nested one and the event's", '{"event":"tool_use","tool":{"input":{"seq":9,"list":[{"seq":8}]}},"seq":5}', 5],
    ['inside a string: not a key', '{"event":"answer","data":"{\\"seq\\":9}","seq":2}', 2],
    ['"seq" as a value, not a key', '{"event":"answer","data":"seq","seq":6}', 6],
    ['a string ending in a backslash before it', '{"event":"answer","data":"a\\\\","seq":11}', 11],
    ['written twice: the last counts, as in JSON.parse', '{"seq":1,"event":"answer","seq":2}', 2],
    ['as a float with no fraction', '{"event":"answer","seq":3.0}', 3],
    ['with an exponent', '{"event":"answer","seq":1e2}', 100],
    ['a key with escapes is not seen', '{"event":"answer","s\\u0065q":4}', undefined],
  ])('seq - %s', (_name, json, seq) => {
    expect(eventSeq(json)).toBe(seq)
  })

  it.each([
    ['not an object', '[{"seq":1}]'],
    ['not JSON', 'not json'],
    ['zero', '{"seq":0}'],
    ['negative', '{"seq":-1}'],
    ['a fraction', '{"seq":1.5}'],
    ['a string', '{"seq":"1"}'],
    ['null', '{"seq":null}'],
    ['beyond the safe integers', '{"seq":9007199254740993}'],
    ['not a JSON number', '{"seq":0x10}'],
    ['a string never closed', '{"event":"answer","data":"hi'],
  ])('seq - %s is refused', (_name, json) => {
    expect(() => eventSeq(json)).toThrow(SyntaxError)
  })

  it('seq - agrees with JSON.parse on events whose text has quotes, backslashes, line breaks and nested values', () => {
    const pieces = ['"', '\\', '\\"', '{', '}', '[', ']', ':', ',', '"seq":', 'seq', '\n', 'é', '\u2028', ' ']
    // A fixed walk through the pieces, so the cases are the same on every run.
    let state = 1
    const next = (n: number) => (state = (state * 48_271) % 2_147_483_647) % n
    for (let i = 0; i < 500; i++) {
      const text = Array.from({ length: next(30) }, () => pieces[next(pieces.length)]).join('')
      const event = {
        event: 'tool_use',
        data: text,
        tool: { id: text, name: 'Bash', input: { seq: i, [text]: [text, { seq: -1 }] } },
        session_id: text,
        seq: i + 1,
      }
      const json = JSON.stringify(event)
      expect(eventSeq(json), json).toBe(JSON.parse(json).seq)
    }
  })
})
