import { describe, expect, it } from 'vitest'
import { EngineConfigSchema, NamedEngineSchema, resolveEngines, type NamedEngine } from '../../../runner/engine/config.ts'

const section = (fields: Record<string, unknown> = {}) => EngineConfigSchema.parse(fields)
const named = (fields: Record<string, unknown>): NamedEngine => NamedEngineSchema.parse({ type: 'claude', command: 'claude', ...fields })

describe('engine config - which engines a service runs', () => {
  it.each<[string, ReturnType<typeof section>, NamedEngine[], { names: string[]; default: string } | string[]]>([
    ['no `engines`: the section is the one engine, claude', section(), [], { names: ['claude'], default: 'claude' }],
    ['no `engines`, the section names its CLI', section({ command: '/opt/claude', model: 'm' }), [], { names: ['claude'], default: 'claude' }],
    ['`engines`: exactly those, the first is the default', section(), [named({ name: 'a' }), named({ name: 'b' })], { names: ['a', 'b'], default: 'a' }],
    ['`engine.default` picks one of them', section({ default: 'b' }), [named({ name: 'a' }), named({ name: 'b' })], { names: ['a', 'b'], default: 'b' }],
    ['`engine.default` that names none', section({ default: 'c' }), [named({ name: 'a' })], ['engine.default "c" names no engine (configured: a)']],
    ['a name used twice', section(), [named({ name: 'a' }), named({ name: 'a' })], ['the engine name "a" is used twice']],
    [
      "the section's CLI fields beside `engines`",
      section({ command: 'claude', env: {} }),
      [named({ name: 'a' })],
      [
        'engine.command describes the one engine of a config without `engines`; with `engines`, set it in an engines entry',
        'engine.env describes the one engine of a config without `engines`; with `engines`, set it in an engines entry',
      ],
    ],
  ])('config - %s', (_name, engine, engines, expected) => {
    const resolved = resolveEngines(engine, engines)
    if (Array.isArray(expected)) {
      expect('problems' in resolved && resolved.problems.map((problem) => problem.message)).toEqual(expected)
    } else {
      expect('engines' in resolved && { names: resolved.engines.map((e) => e.name), default: resolved.default }).toEqual(expected)
    }
  })

  it("config - the section's own engine keeps every CLI field it sets, with the defaults for the rest", () => {
    const resolved = resolveEngines(section({ command: '/opt/claude', args: ['--x'], env: { A: '1' }, permission_mode: 'plan', partial_messages: false }), [])
    expect('engines' in resolved && resolved.engines[0]).toEqual({
      name: 'claude',
      type: 'claude',
      command: '/opt/claude',
      args: ['--x'],
      env: { A: '1' },
      network_allow: [],
      permission_mode: 'plan',
      allowed_tools: [],
      disallowed_tools: [],
      partial_messages: false,
    })
  })

  it.each([
    ['a name with a space', { name: 'my engine' }, 'an engine name is 1 to 64 letters'],
    ['an unknown type', { name: 'x', type: 'vim' }, 'Invalid discriminator value'],
    ['an unknown field', { name: 'x', colour: 'red' }, 'Unrecognized key: "colour"'],
  ])('config - an engines entry with %s is refused', (_name, fields, message) => {
    const parsed = NamedEngineSchema.safeParse({ type: 'claude', command: 'claude', ...fields })
    expect(parsed.success).toBe(false)
    expect(parsed.error?.issues.map((issue) => issue.message).join('; ')).toContain(message)
  })
})
