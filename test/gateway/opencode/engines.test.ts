import { describe, expect, it } from 'vitest'
import type { Command, ReplyOf } from '../../../contract/mod.ts'
import { engineNames, engineOfModel } from '../../../gateway/opencode/engines.ts'
import type { Runners } from '../../../gateway/runners.ts'

describe("opencode engines - an engine is a model of the service's provider", () => {
  it.each([
    ['no model', undefined, undefined],
    ['the default model', { providerID: 'agent-runtime', modelID: 'default' }, undefined],
    ['an engine of the service', { providerID: 'agent-runtime', modelID: 'gemini' }, 'gemini'],
    ["another provider's model (the client's own settings)", { providerID: 'anthropic', modelID: 'claude-sonnet-4-5' }, undefined],
  ])('engines - %s', (_name, model, expected) => {
    expect(engineOfModel(model, 'agent-runtime', 'default')).toBe(expected)
  })

  /** Runners that answer `version` with these engines, or fail while `down`. */
  function runners(names: string[]) {
    const state = { down: false, asked: 0 }
    const port: Runners = {
      send: async <C extends Command>(command: C) => {
        state.asked++
        if (state.down || command.type !== 'version') throw new Error('no runner')
        const reply: ReplyOf<'version'> = { version: '1', engine: names[0]!, engines: names.map((name) => ({ name, type: 'claude', version: '1' })) }
        return reply as ReplyOf<C['type']>
      },
    } as Runners
    return { port, state }
  }

  it("engines - names come from a runner's version answer, asked again only after 30 s", async () => {
    let now = 0
    const { port, state } = runners(['claude', 'gemini'])
    const names = engineNames(port, () => now)
    expect(await names()).toEqual(['claude', 'gemini'])
    now = 29_000
    expect(await names()).toEqual(['claude', 'gemini'])
    expect(state.asked).toBe(1)
    now = 31_000
    await names()
    expect(state.asked).toBe(2)
  })

  it('engines - no runner answers: the names known before, else none', async () => {
    let now = 0
    const { port, state } = runners(['claude'])
    const names = engineNames(port, () => now)
    state.down = true
    expect(await names()).toEqual([])
    state.down = false
    expect(await names()).toEqual(['claude'])
    state.down = true
    now = 60_000
    expect(await names()).toEqual(['claude'])
  })
})
