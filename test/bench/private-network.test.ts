import type { NetworkInterfaceInfo } from 'node:os'
import { describe, expect, it } from 'vitest'
import { onlyLoopback } from '../../bench/private-network.ts'

const address = (internal: boolean): NetworkInterfaceInfo =>
  ({
    address: internal ? '127.0.0.1' : '192.0.2.2',
    netmask: '255.0.0.0',
    family: 'IPv4',
    mac: '00:00:00:00:00:00',
    internal,
    cidr: null,
  }) as NetworkInterfaceInfo

describe('onlyLoopback', () => {
  it.each([
    ['loopback alone', { lo: [address(true)] }, true],
    ['no interface at all', {}, true],
    ['loopback and an ethernet', { lo: [address(true)], eth0: [address(false)] }, false],
    ['an interface with one outside address among loopback ones', { lo: [address(true), address(false)] }, false],
  ])('%s', (_name, interfaces, expected) => {
    expect(onlyLoopback(interfaces)).toBe(expected)
  })
})
