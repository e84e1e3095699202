import { createRequire } from 'node:module'
import type { Diagnostics, Parameters } from 'recheck'

/**
 * The ReDoS check of operator-supplied rules: recheck (a real checker, not a
 * heuristic) decides whether a pattern can backtrack super-linearly in
 * JavaScript's engine — exponentially (`(a|a)*$`) or polynomially
 * (`\s*x\s*$`, `\d+\.\d+` on a long run of digits). Only the automaton
 * checker is used: its verdict is exact and deterministic (the fuzz checker
 * is random), on the pure-JavaScript backend (no child process, no Java).
 *
 * A pattern that is vulnerable, or that recheck cannot decide within the
 * time limit (large bounded repetitions, backreferences), is refused: a rule
 * runs on every command and prompt, so "probably fine" is not enough.
 */

/** Time recheck may spend on one pattern (milliseconds). */
export const REDOS_CHECK_TIMEOUT_MS = 2_000

type CheckSync = (source: string, flags: string, params?: Parameters) => Diagnostics

let checkSync: CheckSync | undefined

/** Loaded on first use (≈150 ms): a configuration without extra rules never pays for it. */
function checker(): CheckSync {
  // The browser build is recheck's pure-JavaScript backend, with a synchronous check.
  checkSync ??= (createRequire(import.meta.url)('recheck/lib/browser.js') as { checkSync: CheckSync }).checkSync
  return checkSync
}

/** Why the pattern is refused, or undefined when recheck finds it safe. */
export function backtrackingProblem(pattern: string, flags: string, timeoutMs: number = REDOS_CHECK_TIMEOUT_MS): string | undefined {
  const result = checker()(pattern, flags.replace(/[dv]/g, ''), { checker: 'automaton', timeout: timeoutMs })
  if (result.status === 'safe') return undefined
  if (result.status === 'vulnerable') {
    const complexity = result.complexity.type === 'exponential' ? 'exponential' : `polynomial (degree ${result.complexity.degree})`
    const hotspot = result.hotspot
      .map((h) => pattern.slice(h.start, h.end))
      .filter((h) => h !== '')
      .join(', ')
    return `can backtrack catastrophically: ${complexity} time on input such as ${JSON.stringify(result.attack.pattern)}${hotspot === '' ? '' : ` (at ${hotspot})`}; bound the repetitions ({0,400}) or make the alternatives disjoint`
  }
  const why =
    result.error.kind === 'timeout'
      ? `it could not be shown safe within ${timeoutMs} ms`
      : result.error.kind === 'unsupported'
        ? `the ReDoS checker does not support it (${result.error.message})`
        : `the ReDoS checker failed (${result.error.kind})`
  return `is refused because ${why}; simplify it (fewer or smaller bounded repetitions, no backreferences)`
}
