import type { V1Pod } from '@kubernetes/client-node'
import { describe, expect, it } from 'vitest'
import { summarizePods } from '../../controller/status.ts'

const pod = (state: string | undefined, phase: string | undefined, ready = false, deleting = false): V1Pod => ({
  metadata: {
    name: 'p',
    labels: state === undefined ? {} : { 'agent-runtime.io/state': state },
    ...(deleting && { deletionTimestamp: new Date(0) }),
  },
  status: {
    ...(phase !== undefined && { phase }),
    conditions: [{ type: 'Ready', status: ready ? 'True' : 'False' }],
  },
})

const count = (pods: V1Pod[], state: string, phase: string) => summarizePods(pods).counts.find((c) => c.state === state && c.phase === phase)?.count

describe('status - summarizePods', () => {
  it('lists every state × phase, zeros included', () => {
    const { counts, warmReady } = summarizePods([])
    expect(counts).toHaveLength(15)
    expect(counts.every((c) => c.count === 0)).toBe(true)
    expect(warmReady).toBe(0)
  })

  it.each([
    // pods, state, phase, expected count
    [[pod('warm', 'Running', true), pod('warm', 'Running')], 'warm', 'Running', 2],
    [[pod('assigned', 'Running', true), pod('warm', 'Running', true)], 'assigned', 'Running', 1],
    [[pod('cold', 'Pending')], 'cold', 'Pending', 1],
    [[pod('warm', undefined)], 'warm', 'Pending', 1],
    [[pod(undefined, 'Running')], 'warm', 'Running', 1],
    [[pod('odd', 'Running')], 'warm', 'Running', 1],
    [[pod('assigned', 'Failed'), pod('assigned', 'Succeeded')], 'assigned', 'Failed', 1],
    [[pod('warm', 'Weird')], 'warm', 'Unknown', 1],
  ])('counts %#: %s/%s', (pods, state, phase, expected) => {
    expect(count(pods, state, phase)).toBe(expected)
  })

  it.each([
    // pods, warm pods a session can take now
    [[pod('warm', 'Running', true)], 1],
    [[pod('warm', 'Running', false)], 0],
    [[pod('warm', 'Pending', true)], 0],
    [[pod('warm', 'Running', true, true)], 0],
    [[pod('cold', 'Running', true)], 0],
    [[pod('assigned', 'Running', true)], 0],
    [[pod('warm', 'Running', true), pod('warm', 'Running', true), pod('assigned', 'Running', true)], 2],
  ])('warm and ready %#: %i', (pods, expected) => {
    expect(summarizePods(pods).warmReady).toBe(expected)
  })
})
