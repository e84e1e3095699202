import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { parseShell } from '../../../waf/shell/parse.ts'
import { renderScript } from '../../../waf/shell/ast.ts'
import { commandViews } from '../../../waf/shell/views.ts'
import { compileRules, inspect } from '../../../waf/matcher.ts'
import { DEFAULT_RULES } from '../../../waf/default-rules.ts'

/** Strings made of the characters that matter to a shell, so the parser's corners are reached. */
const shellish = fc.string({
  unit: fc.constantFrom(
    ...'ab /-~$()`\'"\\|&;<>{}*=#\n\t!0123456789ecsh'.split(''),
    '$(',
    '${',
    "$'",
    '<<',
    'EOF\n',
    'sh -c ',
    'rm -rf ',
    'base64 -d',
    ' | sh',
  ),
  maxLength: 200,
})

describe('waf shell parser', () => {
  it.each([
    { src: `a 'b c' "d $(e "f")" g\\ h`, out: 'a b c d $(e f) g h' },
    { src: 'a | b && c; d & e', out: 'a | b ; c ; d ; e' },
    { src: 'x=$(printf %s `id`)', out: 'x=$(printf %s $(id))' },
    { src: `echo $'a\\tb\\x41'`, out: 'echo a bA' },
    { src: 'a "unterminated', out: 'a unterminated' },
    { src: 'echo ${#x} ${x:-y} $((1+2))', out: 'echo ${#x} y $((1+2))' },
  ])('parse - $src', ({ src, out }) => {
    expect(renderScript(parseShell(src))).toBe(out)
  })

  it('parse - total: any input parses, and views and inspection never throw', () => {
    const rules = compileRules(DEFAULT_RULES)
    fc.assert(
      fc.property(fc.oneof(shellish, fc.string({ maxLength: 200 }), fc.string({ unit: 'binary', maxLength: 100 })), (text) => {
        parseShell(text)
        commandViews(text)
        for (const input of ['command', 'prompt', 'read_path', 'write_path', 'url', 'content'] as const) inspect(text, input, rules)
      }),
      { numRuns: 2_000 },
    )
  })
})
