import { pathToFileURL } from 'node:url'
import { describe, expect, it } from 'vitest'
import { GATE_PLUGIN, runArgs, turnEnv } from '../../../../runner/engine/opencode/args.ts'

describe('opencode args', () => {
  it.each([
    { config: { args: [] }, session: undefined, expected: ['run', '--format', 'json', '--thinking'] },
    {
      config: { args: ['--log-level', 'WARN'], model: 'p/m' },
      session: 'ses_1',
      expected: ['--log-level', 'WARN', 'run', '--format', 'json', '--thinking', '--model', 'p/m', '--session', 'ses_1'],
    },
  ])('runArgs $expected', ({ config, session, expected }) => {
    expect(runArgs(config, session)).toEqual(expected)
  })

  it('turnEnv - the gate plugin joins the configured plugins; the channel fd is named', () => {
    const env = turnEnv({ HOME: '/h', OPENCODE_CONFIG_CONTENT: JSON.stringify({ model: 'p/m', plugin: ['other'] }) })
    expect(JSON.parse(env.OPENCODE_CONFIG_CONTENT!)).toEqual({ model: 'p/m', plugin: ['other', pathToFileURL(GATE_PLUGIN).href] })
    expect(env).toMatchObject({ HOME: '/h', AGENT_RUNTIME_GATE_FD: '3' })
    expect(JSON.parse(turnEnv({}).OPENCODE_CONFIG_CONTENT!)).toEqual({ plugin: [pathToFileURL(GATE_PLUGIN).href] })
  })

  it.each([
    { content: '{not json', code: 'ENGINE_START_FAILED' },
    { content: '[1]', code: 'ENGINE_START_FAILED' },
    { content: '{"plugin":"one"}', code: 'ENGINE_START_FAILED' },
  ])('turnEnv refuses OPENCODE_CONFIG_CONTENT $content', ({ content, code }) => {
    expect(() => turnEnv({ OPENCODE_CONFIG_CONTENT: content })).toThrow(expect.objectContaining({ code }))
  })
})
