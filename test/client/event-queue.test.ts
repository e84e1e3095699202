import { describe, expect, it } from 'vitest'
import { EventQueue } from '../../client/event-queue.ts'

describe('event-queue', () => {
  it('event-queue - yields what was pushed before and after the read, then ends', async () => {
    const queue = new EventQueue<number>()
    queue.push(1)
    const read = (async () => {
      const seen: number[] = []
      for await (const item of queue) seen.push(item)
      return seen
    })()
    queue.push(2)
    await Promise.resolve()
    queue.push(3)
    queue.end()
    queue.push(4)
    expect(await read).toEqual([1, 2, 3])
  })

  it('event-queue - fail rejects the waiting read with the error', async () => {
    const queue = new EventQueue<number>()
    const next = queue.next()
    const error = new Error('gone')
    queue.fail(error)
    await expect(next).rejects.toBe(error)
  })

  it('event-queue - leaving the iterator ends a read still waiting and tells the producer', async () => {
    let left = 0
    const queue = new EventQueue<number>(() => left++)
    const next = queue.next()
    await queue.return()
    expect(await next).toEqual({ value: undefined, done: true })
    expect(left).toBe(1)
    expect(queue.ended).toBe(true)
  })
})
