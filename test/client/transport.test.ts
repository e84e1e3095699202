import { describe, expect, it } from 'vitest'
import { webSocketUrl } from '../../client/transport.ts'

describe('transport - webSocketUrl', () => {
  it.each([
    ['http://127.0.0.1:8080', 'ws://127.0.0.1:8080/ws/v1/agent'],
    ['https://agents.example.com/', 'wss://agents.example.com/ws/v1/agent'],
    ['ws://h:1/ws/v1/agent', 'ws://h:1/ws/v1/agent'],
    ['wss://h/behind/a/proxy', 'wss://h/behind/a/proxy'],
  ])('transport - %s connects to %s', (address, url) => {
    expect(webSocketUrl(address)).toBe(url)
  })

  it.each(['127.0.0.1:8080', 'ftp://h/', 'not a url'])('transport - %j is refused with how to write it', (address) => {
    expect(() => webSocketUrl(address)).toThrow(TypeError)
  })
})
