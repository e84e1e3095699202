/**
 * A small, total shell parser for the WAF: it never throws, whatever the input.
 * It knows what decides where a command starts and what its words are —
 * quotes, escapes, `$'…'`, line continuations, `$(…)`, backticks, process
 * substitution, `${…}`, `$IFS`, simple variables, redirections, here-documents
 * — and nothing about control flow: keywords stay words, `(`/`)`/`{`/`}` only
 * separate commands. Unbalanced quotes run to the end of the input (bash would
 * refuse such a command, so reading more into it is the safe side).
 *
 * Every Parser of one input shares the source string, so positions (of
 * here-document bodies) are offsets into the original command.
 */

import { renderScript, showLiteral, type Item, type Pipeline, type Script, type SimpleCommand, type Word } from './ast.ts'
import { escapePattern } from './expand.ts'
import { ansiC, matchingClose, skipTo } from './scan.ts'

/** How deep `$(…)` / backticks / process substitutions may nest before the input counts as too complex. */
export const MAX_NESTING = 8
/** A variable's value is cut to this length (so `a=$a$a` repeated cannot blow up memory). */
const MAX_VAR_CHARS = 1024
/** More substitutions than this in one input make it too complex. */
const MAX_SUBSTITUTIONS = 10_000
/** Functions recorded per input, and the longest body read (a longer one is cut). */
const MAX_FUNCTIONS = 64
const MAX_FUNCTION_CHARS = 16 * 1024
/**
 * Variable expansion and re-parsing (`eval`, `sh -c`, decoded payloads) may
 * produce at most this many characters per character of input (plus a fixed
 * allowance); past it the input counts as too complex. Keeps the work linear.
 */
export const EXPANSION_FACTOR = 8
const EXPANSION_ALLOWANCE = 64 * 1024

export interface ParseContext {
  vars: Map<string, string>
  /** Shell functions defined in the input (`f(){ …; }`, `function f { …; }`): name → body. */
  functions: Map<string, string>
  /** `$1`…, `$@` while a function body or a `sh -c` script with arguments is parsed; undefined = unknown (read as empty). */
  positional: readonly string[] | undefined
  /** Function definitions seen (recorded or not). */
  definitions: number
  tooComplex: boolean
  substitutions: number
  /** Characters that expansion and re-parsing may still produce. */
  budget: number
}

/** A context for one input of `length` characters. */
export function newParseContext(length: number): ParseContext {
  return {
    vars: new Map(),
    functions: new Map(),
    positional: undefined,
    definitions: 0,
    tooComplex: false,
    substitutions: 0,
    budget: length * EXPANSION_FACTOR + EXPANSION_ALLOWANCE,
  }
}

/** Takes `chars` from the budget; false (and the input marked too complex) when it is spent. */
export function spend(ctx: ParseContext, chars: number): boolean {
  ctx.budget -= chars
  if (ctx.budget >= 0) return true
  ctx.tooComplex = true
  return false
}

/** Parses a whole command line (or script). */
export function parseShell(src: string, ctx: ParseContext = newParseContext(src.length)): Script {
  return new Parser(src, 0, 0, ctx).parseScript(undefined)
}

const REDIRECT = /(\d*|&)(>>|>&|>\||<<<|<<-|<<|<>|<&|>|<)/y
const ASSIGNMENT = /[A-Za-z_][A-Za-z0-9_]*(?=\+?=)/y
const NAME = /[A-Za-z_][A-Za-z0-9_]*/y
const WORD_BREAK = new Set([' ', '\t', '\r', '\n', ';', '&', '|', '(', ')', '<', '>'])
const SETTERS = new Set(['export', 'declare', 'local', 'readonly', 'typeset'])
/** Unquoted characters that start brace or pathname expansion. */
const EXPANDING = new Set(['*', '?', '[', '{'])
const PATTERN_CHARS = new Set(['*', '?', '[', ']', '{', '}', ','])
const FUNCTION_NAME = /^[A-Za-z_][\w:.-]*$/

class WordBuilder {
  value = ''
  shown = ''
  quoted = false
  started = false
  pieces = 0
  sub: Script | undefined
  /** The word as a pattern: quoted text escaped, unquoted `*?[]{},` kept (see expand.ts). */
  pattern = ''
  expands = false
  literal(text: string): void {
    this.value += text
    this.shown += showLiteral(text)
    this.pattern += escapePattern(text)
    this.started = true
    this.pieces += 1
  }
  /** One unquoted character of the command. */
  unquoted(c: string): void {
    this.value += c
    this.shown += showLiteral(c)
    this.pattern += PATTERN_CHARS.has(c) ? c : escapePattern(c)
    if (EXPANDING.has(c)) this.expands = true
    this.started = true
    this.pieces += 1
  }
}

class Parser {
  readonly src: string
  pos: number
  readonly depth: number
  readonly ctx: ParseContext
  stop: ')' | '`' | undefined = undefined
  pending: { redirect: Item & { kind: 'redirect' }; delimiter: string; stripTabs: boolean; expand: boolean; command: SimpleCommand }[] = []

  constructor(src: string, pos: number, depth: number, ctx: ParseContext) {
    this.src = src
    this.pos = pos
    this.depth = depth
    this.ctx = ctx
  }

  parseScript(stop: ')' | '`' | undefined): Script {
    this.stop = stop
    const src = this.src
    const script: Script = { pipelines: [] }
    let pipeline: Pipeline = { commands: [] }
    let command: SimpleCommand = { items: [], subs: [] }
    let prefix = true // still in the NAME=value prefix of the command
    const endCommand = () => {
      if (command.items.length > 0 || command.subs.length > 0) pipeline.commands.push(command)
      command = { items: [], subs: [] }
      prefix = true
    }
    const endPipeline = () => {
      endCommand()
      if (pipeline.commands.length > 0) script.pipelines.push(pipeline)
      pipeline = { commands: [] }
    }
    while (this.pos < src.length) {
      const c = src[this.pos]!
      if (c === ' ' || c === '\t' || c === '\r') {
        this.pos += 1
        continue
      }
      if (c === '\\' && src[this.pos + 1] === '\n') {
        this.pos += 2
        continue
      }
      if ((stop === ')' && c === ')') || (stop === '`' && c === '`')) {
        this.pos += 1
        endPipeline()
        return script
      }
      if (c === '\n') {
        this.pos += 1
        endPipeline()
        this.readHeredocBodies()
        continue
      }
      if (c === '#') {
        const nl = src.indexOf('\n', this.pos)
        this.pos = nl === -1 ? src.length : nl
        continue
      }
      if ((c === '<' || c === '>') && src[this.pos + 1] === '(') {
        const word = this.processSubstitution(command)
        command.items.push({ kind: 'word', word })
        prefix = false
        continue
      }
      REDIRECT.lastIndex = this.pos
      const r = REDIRECT.exec(src)
      if (r !== null && !(r[1] === '&' && r[2] !== '>' && r[2] !== '>>')) {
        this.pos = REDIRECT.lastIndex
        this.redirect(r[0], r[2]!, command)
        continue
      }
      if (c === ';' || c === '&') {
        while (src[this.pos] === ';' || src[this.pos] === '&') this.pos += 1
        endPipeline()
        continue
      }
      if (c === '|') {
        if (src[this.pos + 1] === '|') {
          this.pos += 2
          endPipeline()
        } else {
          this.pos += src[this.pos + 1] === '&' ? 2 : 1
          endCommand()
        }
        continue
      }
      if (c === '(' && this.functionDefinition(command)) {
        command = { items: [], subs: [] }
        prefix = true
        continue
      }
      if (c === '(' || c === ')') {
        this.pos += 1
        endPipeline()
        continue
      }
      for (const word of this.readWord(command)) {
        if (!word.quoted && (word.value === '{' || word.value === '}' || word.value === '!')) {
          // `function f {`: the body starts here.
          const names = command.items.flatMap((i) => (i.kind === 'word' ? [i.word] : []))
          if (word.value === '{' && names.length === 2 && names[0]!.value === 'function' && !names[1]!.quoted && FUNCTION_NAME.test(names[1]!.value)) {
            this.recordFunction(names[1]!.value, this.pos - 1)
            command = { items: [], subs: [] }
          }
          if (word.value !== '!') endPipeline()
          continue
        }
        if (prefix && word.assigns !== undefined) {
          this.assign(word)
        } else {
          delete word.assigns
          prefix = false
        }
        command.items.push({ kind: 'word', word })
        // `export A=b` and friends set variables too.
        const first = command.items[0]
        if (first?.kind === 'word' && SETTERS.has(first.word.value) && command.items.length > 1 && word.assigns === undefined) {
          const m = /^([A-Za-z_][A-Za-z0-9_]*)=([\s\S]*)$/.exec(word.value)
          if (m !== null) this.ctx.vars.set(m[1]!, m[2]!.slice(0, MAX_VAR_CHARS))
        }
      }
    }
    endPipeline()
    return script
  }

  /**
   * At `(` after `f` or `function f`: when `()` follows, records the function's
   * body (the compound command after it) and moves past `()`. The body is then
   * parsed as usual, so its commands are inspected where they are written too.
   */
  private functionDefinition(command: SimpleCommand): boolean {
    const words = command.items.flatMap((i) => (i.kind === 'word' ? [i.word] : []))
    if (words.length !== command.items.length) return false
    const name = words.length === 1 ? words[0]! : words.length === 2 && words[0]!.value === 'function' ? words[1]! : undefined
    if (name === undefined || name.quoted || !FUNCTION_NAME.test(name.value)) return false
    let i = this.pos + 1
    while (this.src[i] === ' ' || this.src[i] === '\t') i += 1
    if (this.src[i] !== ')') return false
    i += 1
    this.pos = i
    while (i < this.src.length && /\s/.test(this.src[i]!)) i += 1
    if (this.src[i] === '{' || this.src[i] === '(') this.recordFunction(name.value, i)
    return true
  }

  /** Records the body of a function whose compound command opens at `open` (`{` or `(`). */
  private recordFunction(name: string, open: number): void {
    // Past the limit, a definition is parsed as usual but not recorded (a call then reads as an unknown program).
    if (this.ctx.definitions >= MAX_FUNCTIONS) return
    this.ctx.definitions += 1
    const o = this.src[open]!
    const window = this.src.slice(open, open + MAX_FUNCTION_CHARS)
    const end = matchingClose(window, 0, o, o === '{' ? '}' : ')')
    this.ctx.functions.set(name, window.slice(1, Math.max(1, end - 1)))
  }

  private assign(word: Word): void {
    const name = word.assigns!
    const eq = word.value.indexOf('=')
    const value = word.value.slice(eq + 1)
    const previous = this.ctx.vars.get(name) ?? ''
    this.ctx.vars.set(name, (word.value[eq - 1] === '+' ? previous + value : value).slice(0, MAX_VAR_CHARS))
  }

  private redirect(raw: string, op: string, command: SimpleCommand): void {
    const src = this.src
    while (src[this.pos] === ' ' || src[this.pos] === '\t') this.pos += 1
    const target = this.atWordEnd() ? undefined : this.readWord(command)[0]
    const item: Item & { kind: 'redirect' } = { kind: 'redirect', op: raw, target }
    command.items.push(item)
    if ((op === '<<' || op === '<<-') && target !== undefined) {
      this.pending.push({ redirect: item, delimiter: target.value, stripTabs: op === '<<-', expand: !target.quoted, command })
    }
  }

  private atWordEnd(): boolean {
    const c = this.src[this.pos]
    return c === undefined || WORD_BREAK.has(c)
  }

  /** Reads the bodies of the here-documents opened on the line that just ended. */
  private readHeredocBodies(): void {
    const src = this.src
    for (const doc of this.pending) {
      const start = this.pos
      let end = src.length // no delimiter line: the body runs to the end
      let next = src.length
      while (this.pos < src.length) {
        const nl = src.indexOf('\n', this.pos)
        const lineEnd = nl === -1 ? src.length : nl
        let line = src.slice(this.pos, lineEnd)
        if (doc.stripTabs) line = line.replace(/^\t+/, '')
        if (line.replace(/\r$/, '') === doc.delimiter) {
          end = this.pos
          next = nl === -1 ? src.length : nl + 1
          break
        }
        this.pos = nl === -1 ? src.length : nl + 1
      }
      doc.redirect.heredoc = { body: src.slice(start, end), start, end }
      if (doc.expand) this.expansionsIn(start, end, doc.command)
      this.pos = next
    }
    this.pending = []
  }

  /** Parses the `$(…)` and backtick substitutions of an unquoted here-document body. */
  private expansionsIn(start: number, end: number, command: SimpleCommand): void {
    const saved = this.pos
    this.pos = start
    while (this.pos < end) {
      const c = this.src[this.pos]
      if (c === '\\') this.pos += 2
      else if (c === '$' && this.src[this.pos + 1] === '(' && this.src[this.pos + 2] !== '(') {
        this.pos += 2
        this.substitution(')', command)
      } else if (c === '`') {
        this.pos += 1
        this.substitution('`', command)
      } else this.pos += 1
    }
    this.pos = saved
  }

  /** Reads one word; unquoted `$IFS` or a split variable can make it several. */
  private readWord(command: SimpleCommand): Word[] {
    const src = this.src
    const words: Word[] = []
    const start = this.pos
    ASSIGNMENT.lastIndex = start
    const assigns = ASSIGNMENT.exec(src)?.[0]
    let w = new WordBuilder()
    const flush = () => {
      if (w.started || w.quoted) words.push(this.finish(w))
      w = new WordBuilder()
    }
    while (this.pos < src.length) {
      const c = src[this.pos]!
      if (WORD_BREAK.has(c) || (c === '`' && this.stop === '`')) break
      if (c === '\\') {
        const next = src[this.pos + 1]
        this.pos += 2
        if (next === '\n' || next === undefined) continue
        w.literal(next)
        w.quoted = true
      } else if (c === "'") {
        const close = src.indexOf("'", this.pos + 1)
        const end = close === -1 ? src.length : close
        w.literal(src.slice(this.pos + 1, end))
        w.quoted = true
        this.pos = end + 1
      } else if (c === '"') {
        this.pos += 1
        this.doubleQuoted(w, command)
      } else if (c === '`') {
        this.pos += 1
        this.substitutionInto(w, '`', command)
      } else if (c === '$') {
        const fields = this.dollar(w, command, false)
        for (const field of fields ?? []) {
          flush()
          if (field !== '') w.literal(field)
        }
      } else {
        w.unquoted(c)
        this.pos += 1
      }
      if (w.value.length > 1_000_000) break
    }
    flush()
    if (assigns !== undefined && words[0]?.value.startsWith(assigns)) words[0].assigns = assigns
    return words
  }

  private finish(w: WordBuilder): Word {
    const word: Word = { value: w.value, shown: w.shown === '' && w.quoted ? '""' : w.shown, quoted: w.quoted }
    if (w.sub !== undefined && w.pieces === 1) word.onlySub = w.sub
    if (w.expands) word.pattern = w.pattern
    return word
  }

  private doubleQuoted(w: WordBuilder, command: SimpleCommand): void {
    const src = this.src
    w.quoted = true
    w.started = true
    while (this.pos < src.length) {
      const c = src[this.pos]!
      if (c === '"') {
        this.pos += 1
        return
      }
      if (c === '\\') {
        const next = src[this.pos + 1]
        this.pos += 2
        if (next === '\n' || next === undefined) continue
        w.literal('$`"\\'.includes(next) ? next : `\\${next}`)
      } else if (c === '`') {
        this.pos += 1
        this.substitutionInto(w, '`', command)
      } else if (c === '$') {
        this.dollar(w, command, true)
      } else {
        w.literal(c)
        this.pos += 1
      }
    }
  }

  /**
   * Handles `$…` at this.pos. Returns the further fields an unquoted expansion
   * starts (each begins a new word; `['']` just ends the current one).
   */
  private dollar(w: WordBuilder, command: SimpleCommand, inDouble: boolean): string[] | undefined {
    const src = this.src
    const next = src[this.pos + 1]
    if (next === "'" && !inDouble) {
      const { text, end } = ansiC(src, this.pos + 2)
      w.literal(text)
      w.quoted = true
      this.pos = end
      return undefined
    }
    if (next === '"' && !inDouble) {
      this.pos += 2
      this.doubleQuoted(w, command)
      return undefined
    }
    if (next === '(' && src[this.pos + 2] === '(') {
      const end = matchingClose(src, this.pos + 1, '(', ')')
      w.literal(src.slice(this.pos, end))
      this.pos = end
      return undefined
    }
    if (next === '(') {
      this.pos += 2
      this.substitutionInto(w, ')', command)
      return undefined
    }
    if (next === '{') {
      const end = matchingClose(src, this.pos + 1, '{', '}')
      const inner = src.slice(this.pos + 2, end - 1)
      this.pos = end
      if (/^IFS(?:[:#%/][^}]*)?$/.test(inner)) return this.ifs(w, inDouble)
      if (/^(?:PATH|HOME|PWD|OLDPWD|SHELL):0:1$/.test(inner)) {
        w.literal('/')
        return undefined
      }
      if (/^[@*1-9]$/.test(inner)) return this.positional(w, inner)
      if (/^[A-Za-z_][A-Za-z0-9_]*$/.test(inner)) return this.variable(w, inner, inDouble)
      const op = /^([A-Za-z_][A-Za-z0-9_]*|[@*1-9])(:?[-=+?])([\s\S]*)$/.exec(inner)
      if (op !== null) return this.withDefault(w, command, op[1]!, op[2]!, op[3]!)
      w.literal(`\${${inner}}`)
      return undefined
    }
    if (next !== undefined && /[@*1-9]/.test(next)) {
      this.pos += 2
      return this.positional(w, next)
    }
    NAME.lastIndex = this.pos + 1
    const name = NAME.exec(src)?.[0]
    if (name !== undefined) {
      this.pos += 1 + name.length
      if (name === 'IFS') return this.ifs(w, inDouble)
      return this.variable(w, name, inDouble)
    }
    w.literal('$')
    this.pos += 1
    return undefined
  }

  /** `$1`, `$@`: known inside a function body or a `sh -c` script with arguments, else empty. */
  private positional(w: WordBuilder, name: string): undefined {
    w.started = true
    const args = this.ctx.positional
    if (args === undefined) return undefined
    const value = name === '@' || name === '*' ? args.join(' ') : args[Number(name) - 1]
    if (value !== undefined && value !== '' && spend(this.ctx, value.length)) w.literal(value)
    return undefined
  }

  /**
   * `${X:-word}`, `${X-word}`, `${X:=word}`: the value when the WAF knows it,
   * else the default (what runs when X is unset — the WAF assumes it may be);
   * `${X:+word}`: the alternative; `${X:?msg}`: the value. `$HOME` is known to be set.
   */
  private withDefault(w: WordBuilder, command: SimpleCommand, name: string, op: string, word: string): string[] | undefined {
    const known = /^[@*1-9]$/.test(name)
      ? this.ctx.positional === undefined
        ? undefined
        : name === '@' || name === '*'
          ? this.ctx.positional.join(' ')
          : this.ctx.positional[Number(name) - 1]
      : name === 'HOME'
        ? '~'
        : this.ctx.vars.get(name)
    const set = known !== undefined && (known !== '' || !op.startsWith(':'))
    const kind = op.at(-1)
    let useWord: boolean
    if (kind === '+') useWord = known === undefined || set
    else if (kind === '?') useWord = false
    else useWord = !set
    if (!useWord) {
      if (known !== undefined) w.literal(known)
      else w.literal(`\${${name}}`)
      return undefined
    }
    // The word is expanded like the rest of the command (variables, substitutions, quotes).
    if (this.depth + 1 > MAX_NESTING) {
      this.ctx.tooComplex = true
      return undefined
    }
    const inner = new Parser(word, 0, this.depth + 1, this.ctx)
    const values: string[] = []
    while (inner.pos < word.length) {
      if (word[inner.pos] === ' ' || word[inner.pos] === '\t') {
        inner.pos += 1
        continue
      }
      const before = inner.pos
      values.push(...inner.readWord(command).map((x) => x.value))
      if (inner.pos === before) inner.pos += 1
    }
    const value = values.join(' ')
    if (name !== 'HOME' && !/^[@*1-9]$/.test(name) && kind === '=') this.ctx.vars.set(name, value.slice(0, MAX_VAR_CHARS))
    if (value !== '') w.literal(value)
    else w.started = true
    return undefined
  }

  private ifs(w: WordBuilder, inDouble: boolean): string[] | undefined {
    if (inDouble) {
      w.literal(' ')
      return undefined
    }
    return ['']
  }

  private variable(w: WordBuilder, name: string, inDouble: boolean): string[] | undefined {
    const value = this.ctx.vars.get(name)
    if (value === undefined || !spend(this.ctx, value.length)) {
      w.literal(name === 'HOME' ? '~' : `$${name}`)
      return undefined
    }
    if (inDouble || !/\s/.test(value)) {
      w.literal(value)
      return undefined
    }
    // Unquoted: the value is split into fields; the first joins the current word.
    const fields = value.split(/\s+/)
    const first = fields.shift()!
    if (first !== '') w.literal(first)
    return fields.length > 0 ? fields : undefined
  }

  private substitutionInto(w: WordBuilder, close: ')' | '`', command: SimpleCommand): void {
    const start = this.pos
    const script = this.substitution(close, command)
    const raw = this.src.slice(start, Math.max(start, this.pos - 1))
    w.value += `$(${raw})`
    w.pattern += escapePattern(`$(${raw})`)
    w.shown += `$(${script === undefined ? showLiteral(raw) : renderScript(script)})`
    w.started = true
    w.pieces += 1
    w.sub = script
  }

  /** Parses a substitution body starting at this.pos up to its close; records it on the command. */
  private substitution(close: ')' | '`', command: SimpleCommand): Script | undefined {
    this.ctx.substitutions += 1
    if (this.depth + 1 > MAX_NESTING || this.ctx.substitutions > MAX_SUBSTITUTIONS) {
      this.ctx.tooComplex = true
      this.pos = close === ')' ? matchingClose(this.src, this.pos - 1, '(', ')') : skipTo(this.src, this.pos, '`')
      return undefined
    }
    const inner = new Parser(this.src, this.pos, this.depth + 1, this.ctx)
    const script = inner.parseScript(close)
    this.pos = inner.pos
    command.subs.push(script)
    return script
  }

  private processSubstitution(command: SimpleCommand): Word {
    const sign = this.src[this.pos]!
    this.pos += 2
    const start = this.pos
    const script = this.substitution(')', command)
    const raw = this.src.slice(start, Math.max(start, this.pos - 1))
    const word: Word = {
      value: `${sign}(${raw})`,
      shown: `${sign}(${script === undefined ? showLiteral(raw) : renderScript(script)})`,
      quoted: false,
    }
    if (script !== undefined) word.procSub = script
    return word
  }
}
