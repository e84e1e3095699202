import { describe, expect, it } from 'vitest'
import { ServiceError } from '../../../contract/mod.ts'
import { EngineSet, type EngineSlot } from '../../../runner/engine/engine-set.ts'
import type { Engine } from '../../../runner/engine/engine.ts'
import type { SessionSandbox } from '../../../runner/sandbox-exec/mod.ts'

/** An engine whose CLI answers `--version` with `version`, or fails with `error`. */
const engine = (answer: { version: string } | { error: string }): Engine => ({
  name: 'claude',
  version: () => ('version' in answer ? Promise.resolve(answer.version) : Promise.reject(new Error(answer.error))),
  start: () => Promise.reject(new Error('not started in this test')),
})
const slot = (name: string, answer: { version: string } | { error: string } = { version: `${name} 1.0` }): EngineSlot => ({
  name,
  type: 'claude',
  engine: engine(answer),
  env: {},
  sandbox: {} as SessionSandbox,
})

describe('engine set - the engines a runner can start', () => {
  const engines = new EngineSet([slot('claude'), slot('gemini', { error: 'gemini: not found' })], 'gemini')

  it('engines - no name gives the default; a configured name gives that engine', () => {
    expect(engines.get(undefined).name).toBe('gemini')
    expect(engines.get('claude').name).toBe('claude')
    expect(engines.names).toEqual(['claude', 'gemini'])
  })

  it('engines - an unknown name is a BAD_REQUEST that lists the configured ones', () => {
    const refused = (() => {
      try {
        engines.get('codex')
      } catch (err) {
        return err
      }
    })()
    expect(refused).toBeInstanceOf(ServiceError)
    expect(refused).toMatchObject({ code: 'BAD_REQUEST', message: 'unknown engine "codex"; configured engines: claude, gemini' })
  })

  it("engines - status tells every engine's version, or why it has none", async () => {
    expect(await engines.status()).toEqual([
      { name: 'claude', type: 'claude', version: 'claude 1.0' },
      { name: 'gemini', type: 'claude', error: 'gemini: not found' },
    ])
  })

  it('engines - a default that is not configured is a programming error', () => {
    expect(() => new EngineSet([slot('claude')], 'gemini')).toThrow('the default engine "gemini" is not configured')
  })
})
