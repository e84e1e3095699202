import { describe, expect, it } from 'vitest'
import { cycleViolations, importsOf, layerViolations, type Import } from '../../scripts/layers.ts'

const edge = (from: string, to: string, line = 1, typeOnly = false): Import => ({ from, line, specifier: to, to, typeOnly })

describe('layers - imports of a file', () => {
  it.each<[string, string, Array<Pick<Import, 'line' | 'specifier' | 'to' | 'typeOnly'>>]>([
    ['a value import', `import { a } from './a.ts'`, [{ line: 1, specifier: './a.ts', to: 'runner/a.ts', typeOnly: false }]],
    ['a type import', `import type { A } from '../bus/mod.ts'`, [{ line: 1, specifier: '../bus/mod.ts', to: 'bus/mod.ts', typeOnly: true }]],
    [
      'inline types keep the import a value import',
      `import { a, type A } from './a.ts'`,
      [{ line: 1, specifier: './a.ts', to: 'runner/a.ts', typeOnly: false }],
    ],
    ['a default and namespace import', `import x, * as y from './x.ts'`, [{ line: 1, specifier: './x.ts', to: 'runner/x.ts', typeOnly: false }]],
    [
      'an import over several lines, at the line it starts',
      `// head\nimport {\n  a,\n  b,\n} from "./a.ts"`,
      [{ line: 2, specifier: './a.ts', to: 'runner/a.ts', typeOnly: false }],
    ],
    ['a side-effect import', `import './setup.ts'`, [{ line: 1, specifier: './setup.ts', to: 'runner/setup.ts', typeOnly: false }]],
    [
      'a re-export',
      `export { a } from '../contract/mod.ts'\nexport * from './b.ts'\nexport type { C } from './c.ts'`,
      [
        { line: 1, specifier: '../contract/mod.ts', to: 'contract/mod.ts', typeOnly: false },
        { line: 2, specifier: './b.ts', to: 'runner/b.ts', typeOnly: false },
        { line: 3, specifier: './c.ts', to: 'runner/c.ts', typeOnly: true },
      ],
    ],
    ['a dynamic import', `const { f } = await import('./lazy.ts')`, [{ line: 1, specifier: './lazy.ts', to: 'runner/lazy.ts', typeOnly: false }]],
    [
      'an import() type in JSDoc',
      `/** @type {import('../state/mod.ts').State} */`,
      [{ line: 1, specifier: '../state/mod.ts', to: 'state/mod.ts', typeOnly: false }],
    ],
    [
      'a JSON import with attributes',
      `import data from './data.json' with { type: 'json' }`,
      [{ line: 1, specifier: './data.json', to: 'runner/data.json', typeOnly: false }],
    ],
    ['packages and builtins are left out', `import { z } from 'zod'\nimport fs from 'node:fs'`, []],
    ['a commented-out import is left out', `// import { a } from './a.ts'\n/*\n * import { b } from './b.ts'\n */`, []],
    ['local exports are not imports', `export const a = './a.ts'\nexport function f() {}`, []],
  ])('%s', (_name, source, expected) => {
    expect(importsOf('runner/file.ts', source)).toEqual(expected.map((found) => ({ from: 'runner/file.ts', ...found })))
  })
})

describe('layers - imports run down the map', () => {
  it.each<[string, Import, string[]]>([
    ['within a folder', edge('runner/a.ts', 'runner/b/c.ts'), []],
    ['down a layer', edge('state/a.ts', 'bus/mod.ts'), []],
    ['down to a leaf', edge('service/a.ts', 'contract/mod.ts'), []],
    ['observability implements a sibling port', edge('observability/a.ts', 'runner/observer.ts', 3, true), []],
    [
      'up a layer',
      edge('config/schema.ts', 'service/server-config.ts', 9),
      ["upward: config/schema.ts:9 imports 'service/server-config.ts': config is below service"],
    ],
    [
      'a type import up a layer',
      edge('runner/runner.ts', 'observability/runner-observer.ts', 25, true),
      ["upward: runner/runner.ts:25 imports 'observability/runner-observer.ts' (type only): runner is below observability"],
    ],
    ['between siblings', edge('gateway/a.ts', 'runner/b.ts', 2), ["sibling: gateway/a.ts:2 imports 'runner/b.ts': gateway and runner never import each other"]],
    [
      'between the two leaves',
      edge('contract/a.ts', 'config/b.ts'),
      ["sibling: contract/a.ts:1 imports 'config/b.ts': contract and config never import each other"],
    ],
    ['into the tests', edge('runner/a.ts', 'test/fakes/b.ts'), ["outside: runner/a.ts:1 imports 'test/fakes/b.ts': test is not in the layer map"]],
    ['out of the repository', edge('bin/a.ts', '../x.ts'), ["outside: bin/a.ts:1 imports '../x.ts', outside the repository"]],
    ['a tool imports anything', edge('bench/run.ts', 'service/start.ts'), []],
  ])('%s', (_name, imported, problems) => {
    expect(layerViolations([imported])).toEqual(problems)
  })
})

describe('layers - no cycle but the allowed ones', () => {
  const allowed = [{ from: 'o/tracing.ts', to: 'o/otel.ts', why: 'lazy' }]
  const lazyPair = [edge('o/tracing.ts', 'o/otel.ts', 50), edge('o/otel.ts', 'o/tracing.ts', 20)]
  it.each<[string, Import[], string[]]>([
    ['a chain', [edge('a.ts', 'b.ts'), edge('b.ts', 'c.ts')], []],
    ['a pair', [edge('a.ts', 'b.ts', 3), edge('b.ts', 'a.ts', 4)], ['cycle: a.ts:3 -> b.ts:4 -> a.ts (2 files in this knot)']],
    ['a file importing itself', [edge('a.ts', 'a.ts', 7)], ['cycle: a.ts:7 -> a.ts']],
    [
      'the shortest cycle of a knot',
      [edge('a.ts', 'b.ts', 1), edge('b.ts', 'c.ts', 2), edge('c.ts', 'a.ts', 3), edge('b.ts', 'a.ts', 4)],
      ['cycle: a.ts:1 -> b.ts:4 -> a.ts (3 files in this knot)'],
    ],
    [
      'one line per knot',
      [edge('a.ts', 'b.ts'), edge('b.ts', 'a.ts'), edge('c.ts', 'd.ts'), edge('d.ts', 'c.ts')],
      ['cycle: a.ts:1 -> b.ts:1 -> a.ts (2 files in this knot)', 'cycle: c.ts:1 -> d.ts:1 -> c.ts (2 files in this knot)'],
    ],
  ])('%s', (_name, imports, problems) => {
    expect(cycleViolations(imports, [])).toEqual(problems)
  })

  it.each<[string, Import[], string[]]>([
    ['the allowed pair', lazyPair, []],
    [
      'a cycle through the allowed pair by another way',
      [...lazyPair, edge('o/otel.ts', 'o/sdk.ts', 21), edge('o/sdk.ts', 'o/otel.ts', 5)],
      ['cycle: o/otel.ts:21 -> o/sdk.ts:5 -> o/otel.ts (2 files in this knot)'],
    ],
    [
      'an allowed import that is gone',
      [edge('o/otel.ts', 'o/tracing.ts')],
      ['stale: the allowed import o/tracing.ts -> o/otel.ts no longer exists; drop it from ALLOWED_CYCLE_EDGES'],
    ],
  ])('allowed imports - %s', (_name, imports, problems) => {
    expect(cycleViolations(imports, allowed)).toEqual(problems)
  })
})
