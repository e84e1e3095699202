import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { compileRules, inspect, inspectToolCall, type InspectResult } from '../../waf/matcher.ts'
import { DEFAULT_RULES } from '../../waf/default-rules.ts'

/**
 * The quality measure of the WAF: every line of corpus/dangerous.txt must be
 * blocked and every line of corpus/benign.txt must pass, with the default
 * rules. The rates are printed; any miss fails the test and is named.
 */

interface Entry {
  file: string
  line: number
  category: string
  kind: 'cmd' | 'prompt' | 'tool'
  text: string
}

function load(name: 'dangerous' | 'benign'): Entry[] {
  const entries: Entry[] = []
  let category = 'uncategorised'
  readFileSync(new URL(`./corpus/${name}.txt`, import.meta.url), 'utf8')
    .split('\n')
    .forEach((raw, index) => {
      const text = raw.trimEnd()
      if (text === '') return
      const heading = /^#\s+([a-z_]+)\s*$/.exec(text)
      if (heading !== null) category = heading[1]!
      if (text.startsWith('#')) return
      const m = /^(cmd|prompt|tool): (.+)$/.exec(text)
      if (m === null) throw new Error(`${name}.txt:${index + 1}: expected "cmd: …", "prompt: …" or "tool: <Name> <json>", got ${JSON.stringify(text)}`)
      entries.push({ file: `${name}.txt`, line: index + 1, category, kind: m[1] as Entry['kind'], text: m[2]! })
    })
  return entries
}

const rules = compileRules(DEFAULT_RULES)

function run(entry: Entry): InspectResult {
  switch (entry.kind) {
    case 'cmd':
      return inspect(entry.text, 'command', rules)
    case 'prompt':
      return inspect(entry.text, 'prompt', rules)
    case 'tool': {
      const m = /^(\S+) (\{.*\})$/.exec(entry.text)
      if (m === null) throw new Error(`${entry.file}:${entry.line}: expected "tool: <Name> <json object>"`)
      return inspectToolCall(m[1]!, JSON.parse(m[2]!), rules)
    }
  }
}

const where = (e: Entry) => `${e.file}:${e.line} ${e.kind}: ${e.text.length > 120 ? `${e.text.slice(0, 119)}…` : e.text}`
const pct = (n: number, d: number) => `${((100 * n) / d).toFixed(1)}%`

describe('waf corpus', () => {
  const dangerous = load('dangerous')
  const benign = load('benign')

  it('corpus - is large enough, well-formed and without duplicates', () => {
    expect(dangerous.length).toBeGreaterThanOrEqual(100)
    expect(benign.length).toBeGreaterThanOrEqual(200)
    for (const list of [dangerous, benign]) {
      const seen = new Map<string, number>()
      const duplicates = list.filter((e) => {
        const key = `${e.kind}:${e.text}`
        const dup = seen.has(key)
        seen.set(key, e.line)
        return dup
      })
      expect(duplicates.map(where)).toEqual([])
    }
    // Lines that appear in both files would make the measure meaningless.
    const benignKeys = new Set(benign.map((e) => `${e.kind}:${e.text}`))
    expect(dangerous.filter((e) => benignKeys.has(`${e.kind}:${e.text}`)).map(where)).toEqual([])
  })

  it('corpus - every dangerous line is blocked and every benign line passes', () => {
    const missedDanger: string[] = []
    const byCategory = new Map<string, { total: number; blocked: number }>()
    for (const entry of dangerous) {
      const result = run(entry)
      const stats = byCategory.get(entry.category) ?? { total: 0, blocked: 0 }
      stats.total += 1
      if (result.blocked) stats.blocked += 1
      else
        missedDanger.push(
          `${where(entry)} — not blocked${result.matches.length > 0 ? ` (only warnings: ${result.matches.map((m) => m.rule_id).join(', ')})` : ''}`,
        )
      byCategory.set(entry.category, stats)
    }
    const falsePositives: string[] = []
    let warned = 0
    for (const entry of benign) {
      const result = run(entry)
      if (result.matches.length > 0) warned += 1
      if (result.blocked) {
        const rules = result.matches.filter((m) => m.level === 'block').map((m) => `${m.rule_id} on "${m.excerpt}"`)
        falsePositives.push(`${where(entry)} — blocked by ${rules.join(', ')}`)
      }
    }

    const blocked = dangerous.length - missedDanger.length
    const passed = benign.length - falsePositives.length
    const rows = [
      ['dangerous blocked', `${blocked}/${dangerous.length}`, pct(blocked, dangerous.length)],
      ['benign passed', `${passed}/${benign.length}`, pct(passed, benign.length)],
      ['benign with a warning', `${warned}/${benign.length}`, pct(warned, benign.length)],
      ...[...byCategory].map(([category, s]) => [`  ${category}`, `${s.blocked}/${s.total}`, pct(s.blocked, s.total)]),
    ]
    const width = Math.max(...rows.map((r) => r[0]!.length))
    console.log(['WAF corpus, default rules:', ...rows.map(([a, b, c]) => `  ${a!.padEnd(width)}  ${b!.padStart(8)}  ${c!.padStart(6)}`)].join('\n'))

    expect(missedDanger).toEqual([])
    expect(falsePositives).toEqual([])
  })
})
