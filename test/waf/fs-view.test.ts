import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { hostFsView } from '../../waf/fs-view.ts'
import { compileRules, inspect } from '../../waf/matcher.ts'
import { DEFAULT_RULES } from '../../waf/default-rules.ts'

const rules = compileRules(DEFAULT_RULES)
const dir = mkdtempSync(path.join(os.tmpdir(), 'waf-fs-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

describe('waf host filesystem view', () => {
  it('fs - a glob only the real filesystem resolves is expanded against it', () => {
    const command = 'cat /proc/self/envi*'
    expect(inspect(command, 'command', rules).blocked).toBe(false) // the standard layout has no /proc/self
    expect(inspect(command, 'command', rules, { fs: hostFsView(dir) }).matches.map((m) => m.rule_id)).toContain('cred.secret-file')
  })

  it('fs - relative globs are read from the working directory of the call', () => {
    mkdirSync(path.join(dir, 'home', 'dev', '.ssh'), { recursive: true })
    writeFileSync(path.join(dir, 'home', 'dev', '.ssh', 'id_ed25519'), 'x')
    const view = hostFsView(path.join(dir, 'home', 'dev'))
    expect(view.list(path.join(dir, 'home', 'dev', '.ssh'))).toEqual(['id_ed25519'])
    expect(inspect('cat .ss?/id_*', 'command', rules, { fs: view }).matches.map((m) => m.rule_id)).toEqual([])
    expect(inspect('cat ~/.ss?/id_e*', 'command', rules, { fs: view, home: path.join(dir, 'home', 'dev') }).blocked).toBe(true)
    expect(hostFsView('relative/dir').cwd).toBeUndefined()
    expect(view.list(path.join(dir, 'missing'))).toBeUndefined()
  })
})
