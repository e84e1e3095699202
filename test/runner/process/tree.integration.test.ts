/** The process table read from /proc, with a child of this process in it (the pure parts: tree.test.ts). */
import { describe, expect, it, vi } from 'vitest'
import { processTable } from '../../../runner/process/tree.ts'

describe('processTable', () => {
  it('sees this process and a tagged child, with its tag', async () => {
    const { spawn } = await import('node:child_process')
    const child = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 10_000)'], { env: { ...process.env, SCAN_TEST_TAG: 'scan-me' }, stdio: 'ignore' })
    try {
      await vi.waitFor(async () => {
        const rows = await processTable('SCAN_TEST_TAG')
        expect(rows.find((row) => row.pid === child.pid)).toMatchObject({ ppid: process.pid, tag: 'scan-me' })
        expect(rows.some((row) => row.pid === process.pid)).toBe(true)
      })
    } finally {
      child.kill('SIGKILL')
    }
  })
})
