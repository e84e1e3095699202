import { describe, expect, test } from 'vitest'
import { ControllerConfigSchema } from '../../controller/config.ts'
import { sessionLabelValue } from '../../controller/labels.ts'

describe('controller config - defaults and checks', () => {
  test('defaults', () => {
    const c = ControllerConfigSchema.parse({})
    expect(c.warm_pool).toBe(2)
    expect(c.pod_ready_timeout).toBe(120_000)
    expect(c.session_idle_timeout).toBe(1_800_000)
    expect(c.leader_election).toEqual({ enabled: true, lease_name: 'agent-runtime-controller', lease_duration: 15_000, renew_interval: 5_000 })
    expect(c.sandbox.storage).toEqual({ type: 'emptyDir', size_limit: '10Gi' })
  })
  test('session_idle_timeout 0 means never', () => {
    expect(ControllerConfigSchema.parse({ session_idle_timeout: '0' }).session_idle_timeout).toBe(0)
  })
  test.each([
    ['negative warm pool', { warm_pool: -1 }, ['warm_pool']],
    ['pool that is not a DNS label', { pool: 'Bad_Pool' }, ['pool']],
    ['ready timeout 0', { pod_ready_timeout: '0' }, ['pod_ready_timeout']],
    ['bad duration', { resync_interval: '5x' }, ['resync_interval']],
    ['bad quantity', { sandbox: { resources: { limits: { memory: 'lots' } } } }, ['sandbox', 'resources', 'limits', 'memory']],
    ['unknown storage type', { sandbox: { storage: { type: 'hostPath' } } }, ['sandbox', 'storage', 'type']],
    ['pvc without claim', { sandbox: { storage: { type: 'persistentVolumeClaim' } } }, ['sandbox', 'storage', 'claim_name']],
    ['unknown key', { sandbox: { privileged: true } }, ['sandbox']],
    ['root user', { sandbox: { run_as_user: 0 } }, ['sandbox', 'run_as_user']],
  ])('rejects %s', (_name, input, path) => {
    const result = ControllerConfigSchema.safeParse(input)
    expect(result.success).toBe(false)
    expect(result.error!.issues[0]!.path).toEqual(path)
  })
})

describe('labels - sessionLabelValue', () => {
  test.each([
    ['s1', 's1'],
    ['chat-room_42.x', 'chat-room_42.x'],
    ['has space', 'h-' + 'x'],
    ['a'.repeat(64), 'h-'],
    ['h-looks-hashed', 'h-'],
    ['-leading', 'h-'],
  ])('%s', (id, expected) => {
    const value = sessionLabelValue(id)
    if (expected.startsWith('h-')) {
      expect(value).toMatch(/^h-[0-9a-f]{40}$/)
      expect(sessionLabelValue(id)).toBe(value)
    } else {
      expect(value).toBe(expected)
    }
  })
})
