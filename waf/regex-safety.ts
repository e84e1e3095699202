/**
 * A static check against the classic catastrophic-backtracking shape: an
 * unbounded quantifier (`*`, `+`, `{n,}`) applied to a group that itself
 * contains an unbounded quantifier, as in `(a+)+` or `(?:\s*x)*`. JavaScript's
 * regex engine backtracks, so such a pattern can take exponential time on a
 * crafted input; bounding the outer repetition (`{0,8}`) removes the risk.
 *
 * It is a heuristic (it does not catch overlapping alternatives such as
 * `(a|a)*`), paired with the adversarial-input tests of the default rules.
 */

/** Returns why the pattern is unsafe, or undefined when no nested unbounded quantifier is found. */
export function nestedQuantifierProblem(pattern: string): string | undefined {
  // One frame per open group: does its body contain an unbounded quantifier?
  const stack: { unbounded: boolean; start: number }[] = []
  let i = 0
  while (i < pattern.length) {
    const c = pattern[i]!
    if (c === '\\') {
      i += 2
      continue
    }
    if (c === '[') {
      i = skipClass(pattern, i)
      continue
    }
    if (c === '(') {
      stack.push({ unbounded: false, start: i })
      i += 1
      continue
    }
    if (c === ')') {
      const frame = stack.pop() ?? { unbounded: false, start: 0 }
      i += 1
      const q = quantifierAt(pattern, i)
      if (q !== undefined) {
        if (q.unbounded && frame.unbounded) {
          return `the group at offset ${frame.start} repeats without bound and contains an unbounded quantifier; this can backtrack catastrophically — bound the outer repetition, e.g. {0,8}`
        }
        if (q.unbounded) frame.unbounded = true
        i = q.end
      }
      // The group's content (and its own quantifier) counts for the enclosing group.
      if (frame.unbounded) markUnbounded()
      continue
    }
    const q = quantifierAt(pattern, i)
    if (q !== undefined) {
      if (q.unbounded) markUnbounded()
      i = q.end
      continue
    }
    i += 1
  }
  return undefined

  function markUnbounded(): void {
    const top = stack.at(-1)
    if (top !== undefined) top.unbounded = true
  }
}

/** A quantifier starting at `i`: its end offset and whether it is unbounded. */
function quantifierAt(pattern: string, i: number): { end: number; unbounded: boolean } | undefined {
  const c = pattern[i]
  let end: number
  let unbounded: boolean
  if (c === '*' || c === '+') {
    end = i + 1
    unbounded = true
  } else if (c === '?') {
    end = i + 1
    unbounded = false
  } else if (c === '{') {
    const m = /^\{(\d+)(,(\d*))?\}/.exec(pattern.slice(i, i + 24))
    if (m === null) return undefined
    end = i + m[0].length
    unbounded = m[2] !== undefined && m[3] === ''
  } else {
    return undefined
  }
  if (pattern[end] === '?' || pattern[end] === '+') end += 1 // lazy (possessive is not JS, but skip it)
  return { end, unbounded }
}

/** Offset just past the character class opening at `i`. */
function skipClass(pattern: string, i: number): number {
  let j = i + 1
  if (pattern[j] === '^') j += 1
  if (pattern[j] === ']') j += 1
  while (j < pattern.length && pattern[j] !== ']') j += pattern[j] === '\\' ? 2 : 1
  return j + 1
}
