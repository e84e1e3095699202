import { coreWords } from './command-core.ts'
import type { Item, Script, Word } from './ast.ts'

/**
 * Evaluates the data a pipeline produces when it is made only of literals and
 * decoders — `echo …`, `printf '\x72m'`, `cat <<EOF`, `base64 -d <<< …`,
 * `| base64 -d`, `| xxd -r -p`, `| rev`, `| tr` (rot13) — so what is piped
 * into a shell, or handed to `sh -c "$(…)"`, can be inspected as a command.
 * Anything else (a download, a file) has no known value: undefined.
 */

/** Decoded payloads longer than this are cut (the matching stays linear). */
export const MAX_DATA_CHARS = 64 * 1024

/** The output of these commands (cores), in order, or undefined when it cannot be known. */
export function pipelineData(cores: readonly (readonly Item[])[]): string | undefined {
  let data: string | undefined
  for (const [index, core] of cores.entries()) {
    const words = coreWords(core)
    const name = words[0]?.value
    if (name === undefined) return undefined
    const stdin = stdinOf(core)
    const input = stdin ?? (index === 0 ? undefined : data)
    if (index === 0 && stdin === undefined) {
      data = source(name, words.slice(1))
    } else {
      if (input === undefined) return undefined
      data = filter(name, words.slice(1), input)
    }
    if (data === undefined) return undefined
    if (data.length > MAX_DATA_CHARS) data = data.slice(0, MAX_DATA_CHARS)
  }
  return data
}

/** The value of a word that is a literal, or a `$(…)` made of literals and decoders. */
export function wordData(word: Word): string | undefined {
  const script = word.onlySub ?? word.procSub
  if (script !== undefined) return scriptData(script)
  return word.value
}

/** The data of a one-pipeline script, or undefined. */
export function scriptData(script: Script): string | undefined {
  if (script.pipelines.length !== 1) return undefined
  return pipelineData(script.pipelines[0]!.commands.map((c) => c.items))
}

/** A here-document body or here-string feeding the command, if any. */
function stdinOf(core: readonly Item[]): string | undefined {
  for (const item of core) {
    if (item.kind !== 'redirect') continue
    if (item.heredoc !== undefined) return item.heredoc.body
    if (item.op.endsWith('<<<') && item.target !== undefined) return (wordData(item.target) ?? item.target.value) + '\n'
  }
  return undefined
}

function source(name: string, args: readonly Word[]): string | undefined {
  if (name === 'echo') {
    let i = 0
    let escapes = false
    let newline = true
    while (i < args.length && /^-[neE]+$/.test(args[i]!.value)) {
      if (args[i]!.value.includes('e')) escapes = true
      if (args[i]!.value.includes('n')) newline = false
      i += 1
    }
    const text = args
      .slice(i)
      .map((w) => wordData(w) ?? w.value)
      .join(' ')
    return (escapes ? unescapeBackslashes(text) : text) + (newline ? '\n' : '')
  }
  if (name === 'printf') {
    const values = args.map((w) => wordData(w) ?? w.value)
    if (values[0] === '-v') return undefined
    const format = values[0] ?? ''
    const rest = values.slice(1)
    return unescapeBackslashes(format).replace(/%([%sbdc])/g, (_, kind: string) => {
      if (kind === '%') return '%'
      const value = rest.shift() ?? ''
      return kind === 'b' ? unescapeBackslashes(value) : value
    })
  }
  return undefined
}

function filter(name: string, args: readonly Word[], input: string): string | undefined {
  const flags = args.map((w) => w.value)
  const has = (re: RegExp) => flags.some((f) => re.test(f))
  switch (name) {
    case 'base64':
    case 'basenc':
      return has(/^(?:-[a-zA-Z]*[dD][a-zA-Z]*|--decode)$/) ? base64(input) : undefined
    case 'openssl':
      return (flags[0] === 'base64' || flags[0] === 'enc') && has(/^-d$/) ? base64(input) : undefined
    case 'xxd':
      return has(/^-[a-z]*r/) && has(/^-[a-z]*p|^-ps$|^-plain$/) ? hex(input) : undefined
    case 'rev':
      return input
        .split('\n')
        .map((line) => [...line].reverse().join(''))
        .join('\n')
    case 'tr':
      return rot13Sets(flags) ? rot13(input) : undefined
    case 'cat':
    case 'tee':
      return flags.every((f) => f.startsWith('-')) ? input : undefined
    default:
      return undefined
  }
}

function base64(input: string): string | undefined {
  const text = input.replace(/\s+/g, '')
  if (!/^[A-Za-z0-9+/_-]*={0,2}$/.test(text) || text.length === 0) return undefined
  return printable(Buffer.from(text, 'base64').toString('utf8'))
}

function hex(input: string): string | undefined {
  const text = input.replace(/\s+/g, '')
  if (!/^(?:[0-9a-fA-F]{2})+$/.test(text)) return undefined
  return printable(Buffer.from(text, 'hex').toString('utf8'))
}

/** Text, not binary: no NUL or replacement character and few control characters. */
function printable(text: string): string | undefined {
  if (/[\0\uFFFD]/.test(text)) return undefined
  const controls = text.match(/[\x01-\x08\x0b\x0c\x0e-\x1f\x7f]/g)?.length ?? 0
  return controls > text.length / 20 ? undefined : text
}

function rot13Sets(flags: readonly string[]): boolean {
  const sets = flags.filter((f) => !f.startsWith('-') || f.length === 1)
  return sets.length === 2 && /^\[?(?:A-Za-z|a-zA-Z|a-z|A-Z)\]?$/.test(sets[0]!) && /^\[?(?:N-ZA-Mn-za-m|n-za-mN-ZA-M|n-za-m|N-ZA-M)\]?$/.test(sets[1]!)
}

function rot13(text: string): string {
  return text.replace(/[a-zA-Z]/g, (c) => {
    const base = c <= 'Z' ? 65 : 97
    return String.fromCharCode(((c.charCodeAt(0) - base + 13) % 26) + base)
  })
}

/** Backslash escapes as printf and `echo -e` read them. */
function unescapeBackslashes(text: string): string {
  return text.replace(/\\(x[0-9a-fA-F]{1,2}|u[0-9a-fA-F]{1,4}|0?[0-7]{1,3}|[\s\S])/g, (_, e: string) => {
    if (e[0] === 'x' || e[0] === 'u') return String.fromCharCode(parseInt(e.slice(1), 16))
    if (/^[0-7]/.test(e)) return String.fromCharCode(parseInt(e, 8))
    return ({ n: '\n', t: '\t', r: '\r', a: '\x07', b: '\b', e: '\x1b', f: '\f', v: '\v', '\\': '\\' } as Record<string, string>)[e] ?? `\\${e}`
  })
}
