/**
 * The layer check (run by `npm run lint`): imports between the source folders
 * run only down the layer map, and they form no cycle but the allowed ones.
 * Prints one line per violation with the importing file, its line and the
 * import, and exits 1 when there is any. Type-only imports count too: a layer
 * that names another's types depends on it all the same.
 */
import { readdirSync, readFileSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

/**
 * The layer map, bottom (0) to top: a folder imports only folders of a lower
 * rank; folders of one rank are siblings that never import each other.
 * bench/, scripts/ and test/ are tools on top and are not checked.
 */
export const LAYERS: Readonly<Record<string, number>> = {
  contract: 0,
  config: 0,
  // The typed client (Node, the browser console, the CLI's run and attach): the contract only.
  client: 1,
  bus: 1,
  state: 2,
  // The WAF: rules, the shell model, the matcher and the tool gate the engines ask; the contract only.
  waf: 2,
  runner: 3,
  gateway: 3,
  controller: 3,
  observability: 4,
  service: 5,
  bin: 6,
}

/** An import that may close a cycle, with the reason it may. */
export type AllowedEdge = { from: string; to: string; why: string }

// None: the lazy OpenTelemetry import (tracing.ts -> otel.ts) closes no cycle since otel.ts takes its types from spans.ts.
export const ALLOWED_CYCLE_EDGES: readonly AllowedEdge[] = []

/** One import of one file: `from` and `to` are paths from the repository root. */
export type Import = { from: string; line: number; specifier: string; to: string; typeOnly: boolean }

// A static import or re-export at the start of a line (so not in a comment),
// possibly over several lines: `import type { A,\n B } from './b.ts'`.
const STATIC_IMPORT = /^[ \t]*(?:import|export)\s+(type\s+)?(?:[\w$*{},\s]*?\bfrom\s*)?['"]([^'"\n]+)['"]/gm
// A dynamic import, or an `import('./x.ts')` type in a type position or JSDoc.
const DYNAMIC_IMPORT = /\bimport\(\s*['"]([^'"\n]+)['"]\s*\)/g

/** The project-relative imports of one source file (packages and node: builtins are left out). */
export function importsOf(file: string, source: string): Import[] {
  const found: Import[] = []
  const add = (index: number, specifier: string, typeOnly: boolean) => {
    if (!specifier.startsWith('.')) return
    const to = path.posix.normalize(path.posix.join(path.posix.dirname(file), specifier))
    found.push({ from: file, line: lineAt(source, index), specifier, to, typeOnly })
  }
  for (const m of source.matchAll(STATIC_IMPORT)) add(m.index, m[2]!, m[1] !== undefined)
  for (const m of source.matchAll(DYNAMIC_IMPORT)) add(m.index, m[1]!, false)
  return found.sort((a, b) => a.line - b.line)
}

function lineAt(source: string, index: number): number {
  let line = 1
  for (let i = source.indexOf('\n'); i !== -1 && i < index; i = source.indexOf('\n', i + 1)) line++
  return line
}

const topFolder = (file: string) => file.split('/')[0]!

function importText(edge: Import): string {
  return `${edge.from}:${edge.line} imports '${edge.specifier}'${edge.typeOnly ? ' (type only)' : ''}`
}

/** Each import that does not run down the layer map, as a line to print. */
export function layerViolations(imports: readonly Import[], layers: Readonly<Record<string, number>> = LAYERS): string[] {
  const problems: string[] = []
  for (const edge of imports) {
    const from = topFolder(edge.from)
    const to = topFolder(edge.to)
    if (from === to) continue
    const fromRank = layers[from]
    const toRank = layers[to]
    if (fromRank === undefined) continue
    if (edge.to.startsWith('..')) problems.push(`outside: ${importText(edge)}, outside the repository`)
    else if (toRank === undefined) problems.push(`outside: ${importText(edge)}: ${to} is not in the layer map`)
    else if (toRank === fromRank) problems.push(`sibling: ${importText(edge)}: ${from} and ${to} never import each other`)
    else if (toRank > fromRank) problems.push(`upward: ${importText(edge)}: ${from} is below ${to}`)
  }
  return problems
}

/**
 * Each import cycle among the files, as a line to print: one shortest cycle
 * for each strongly connected set of files, with its size. The allowed
 * edges are left out of the graph; one that no longer exists is reported
 * too, so the list cannot outlive its reason.
 */
export function cycleViolations(imports: readonly Import[], allowed: readonly AllowedEdge[] = ALLOWED_CYCLE_EDGES): string[] {
  const problems: string[] = []
  const files = new Set(imports.map((edge) => edge.from))
  const isAllowed = (edge: Import) => allowed.some((a) => a.from === edge.from && a.to === edge.to)
  for (const a of allowed) {
    if (!imports.some((edge) => edge.from === a.from && edge.to === a.to))
      problems.push(`stale: the allowed import ${a.from} -> ${a.to} no longer exists; drop it from ALLOWED_CYCLE_EDGES`)
  }
  const out = new Map<string, Import[]>()
  for (const edge of imports) {
    if (!files.has(edge.to) || isAllowed(edge)) continue
    const list = out.get(edge.from) ?? []
    list.push(edge)
    out.set(edge.from, list)
  }
  for (const knot of stronglyConnected([...files].sort(), (file) => (out.get(file) ?? []).map((edge) => edge.to))) {
    const members = new Set(knot)
    const cycle = shortestCycle(knot[0]!, (file) => (out.get(file) ?? []).filter((edge) => members.has(edge.to)))
    if (cycle === undefined) continue
    const size = knot.length === 1 ? '' : ` (${knot.length} files in this knot)`
    problems.push(`cycle: ${cycle.map((edge) => `${edge.from}:${edge.line}`).join(' -> ')} -> ${cycle[0]!.from}${size}`)
  }
  return problems
}

/** Tarjan's strongly connected components, each sorted, with one file or more. */
function stronglyConnected(nodes: readonly string[], next: (node: string) => string[]): string[][] {
  const index = new Map<string, number>()
  const low = new Map<string, number>()
  const stack: string[] = []
  const onStack = new Set<string>()
  const components: string[][] = []
  const visit = (node: string) => {
    index.set(node, index.size)
    low.set(node, index.get(node)!)
    stack.push(node)
    onStack.add(node)
    for (const to of next(node)) {
      if (!index.has(to)) {
        visit(to)
        low.set(node, Math.min(low.get(node)!, low.get(to)!))
      } else if (onStack.has(to)) low.set(node, Math.min(low.get(node)!, index.get(to)!))
    }
    if (low.get(node) !== index.get(node)) return
    const component: string[] = []
    let member: string
    do {
      member = stack.pop()!
      onStack.delete(member)
      component.push(member)
    } while (member !== node)
    components.push(component.sort())
  }
  for (const node of nodes) if (!index.has(node)) visit(node)
  return components.sort((a, b) => a[0]!.localeCompare(b[0]!))
}

/** The shortest chain of imports from `start` back to itself (breadth first), or undefined. */
function shortestCycle(start: string, next: (node: string) => Import[]): Import[] | undefined {
  const via = new Map<string, Import>()
  const queue = [start]
  for (let i = 0; i < queue.length; i++) {
    for (const edge of next(queue[i]!)) {
      if (edge.to === start) {
        const chain = [edge]
        for (let at = edge.from; at !== start; at = via.get(at)!.from) chain.unshift(via.get(at)!)
        return chain
      }
      if (via.has(edge.to)) continue
      via.set(edge.to, edge)
      queue.push(edge.to)
    }
  }
  return undefined
}

const SOURCE = /\.(?:ts|mts|js|mjs|cjs)$/

function sourceFiles(root: string, folder: string): string[] {
  return readdirSync(path.join(root, folder), { recursive: true, encoding: 'utf8' })
    .filter((name) => SOURCE.test(name))
    .map((name) => path.posix.join(folder, name.split(path.sep).join('/')))
}

/** Every import of every file in the layer folders under `root`. */
export function readImports(root: string): Import[] {
  return Object.keys(LAYERS)
    .flatMap((folder) => sourceFiles(root, folder))
    .sort()
    .flatMap((file) => importsOf(file, readFileSync(path.join(root, file), 'utf8')))
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
  const imports = readImports(root)
  const problems = [...layerViolations(imports), ...cycleViolations(imports)]
  for (const problem of problems) console.log(problem)
  const files = new Set(imports.map((edge) => edge.from)).size
  console.log(`layers: ${problems.length} problem${problems.length === 1 ? '' : 's'} in ${imports.length} imports of ${files} files`)
  process.exitCode = problems.length === 0 ? 0 : 1
}
