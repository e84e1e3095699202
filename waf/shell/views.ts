import path from 'node:path'
import { commandCore, coreWords, embeddedScripts, interpreterCode, interpreterReadsStdin, INTERPRETERS, readsScriptFromStdin, SHELLS } from './command-core.ts'
import { pipelineData, scriptData, wordData } from './data.ts'
import { expandPattern, newExpandContext, type ExpandContext, type FsView } from './expand.ts'
import { inlineCodeCommands } from './inline-code.ts'
import { renderItems, showLiteral, type Item, type Script, type SimpleCommand } from './ast.ts'
import { MAX_NESTING, newParseContext, parseShell, spend, type ParseContext } from './parse.ts'

/**
 * The views of a shell command that rules are matched against (see the
 * `command` and `command_text` targets in rules.ts).
 */
export interface CommandViews {
  /**
   * One simple command per line — as written (quotes removed), then, when it
   * differs, with wrappers stripped — followed by one line per pipeline of
   * several commands (stripped commands joined by ` | `). Scripts the command
   * hands to a shell (`sh -c`, `eval`, `ssh host …`, `find -exec`, `$(…)`,
   * here-documents and decoded data piped into a shell) add their own lines.
   */
  parsed: string
  /** The command as written (data here-documents left out), blanks collapsed, then every decoded payload. */
  text: string
  /** URLs the command names (for the `url` target). */
  urls: string[]
  /** Nesting deeper than the parser follows: the caller blocks rather than inspects in part. */
  tooComplex: boolean
}

/** Unwrapping (sh -c inside sh -c …) stops at this depth and marks the input too complex. */
const MAX_WALK_DEPTH = MAX_NESTING * 2
/** Calls of shell functions followed per input. */
const MAX_FUNCTION_CALLS = 64
const FETCHERS = new Set(['curl', 'wget', 'http', 'https', 'xh', 'aria2c', 'lynx', 'links', 'fetch', 'nc', 'ncat', 'telnet'])
const URL_IN_TEXT = /\b(?:https?|ftps?|wss?|file|gopher|dict|tftp|ldap):\/\/[^\s'"<>`|]+/gi

export interface ViewOptions {
  /** Directory listings for glob expansion, and the working directory (default: a standard Linux root layout, no working directory). */
  fs?: FsView | undefined
  /** The user's home directory, for `~/…` globs. */
  home?: string | undefined
}

export function commandViews(command: string, options: ViewOptions = {}): CommandViews {
  const ctx = newParseContext(command.length)
  const builder = new ViewBuilder(ctx, newExpandContext(options.fs, options.home))
  builder.walk(parseShell(command, ctx), 0, true)
  let kept = ''
  let from = 0
  for (const range of builder.dataHeredocs.sort((a, b) => a.start - b.start)) {
    if (range.start < from) continue
    kept += command.slice(from, range.start)
    from = range.end
  }
  kept += command.slice(from)
  const text = [kept, ...builder.decoded].map(normalizeText).join('\n')
  return { parsed: builder.lines.join('\n'), text, urls: [...builder.urls], tooComplex: ctx.tooComplex }
}

/** Line continuations joined, `$IFS` read as a blank, glued empty quotes (`r''m`) dropped, blanks collapsed. */
export function normalizeText(text: string): string {
  return text
    .replace(/\\\r?\n/g, '')
    .replace(/\$\{IFS\}|\$IFS(?![A-Za-z0-9_])/g, ' ')
    .replace(/(?<=\S)(?:''|"")(?=\S)/g, '')
    .replace(/[ \t\r\f\v]+/g, ' ')
    .replace(/^ | $/gm, '')
}

/** A program name computed by a substitution (`` `echo rm` -rf / ``, `$(printf '\x72m')`) is replaced by its value when it is made of literals. */
function withEvaluatedProgram(command: SimpleCommand): SimpleCommand {
  const index = command.items.findIndex((i) => i.kind === 'word' && i.word.assigns === undefined)
  const first = command.items[index]
  if (first?.kind !== 'word' || first.word.onlySub === undefined) return command
  const data = scriptData(first.word.onlySub)?.trim()
  if (data === undefined || data === '') return command
  const items = [...command.items]
  items[index] = { kind: 'word', word: { value: data, shown: showLiteral(data), quoted: false } }
  return { ...command, items }
}

/**
 * The command with brace and pathname expansion done (`rm -rf /{etc,usr}` →
 * `rm -rf /etc /usr`); the same object when nothing expands.
 */
function expanded(command: SimpleCommand, ectx: ExpandContext): SimpleCommand {
  if (!command.items.some((i) => (i.kind === 'word' ? i.word.pattern : i.target?.pattern) !== undefined)) return command
  let changed = false
  const items: Item[] = []
  for (const item of command.items) {
    const word = item.kind === 'word' ? item.word : item.target
    if (word?.pattern === undefined || word.assigns !== undefined) {
      items.push(item)
      continue
    }
    const values = expandPattern(word.pattern, ectx)
    if (values.length === 1 && values[0] === word.value) {
      items.push(item)
      continue
    }
    changed = true
    if (item.kind === 'redirect') {
      // A redirection target is expanded when it names one file (bash refuses an ambiguous one).
      items.push(values.length === 1 ? { ...item, target: { value: values[0]!, shown: showLiteral(values[0]!), quoted: true } } : item)
    } else {
      for (const value of values) items.push({ kind: 'word', word: { value, shown: showLiteral(value), quoted: true } })
    }
  }
  return changed ? { ...command, items } : command
}

class ViewBuilder {
  readonly ctx: ParseContext
  readonly ectx: ExpandContext
  readonly lines: string[] = []
  readonly decoded: string[] = []
  readonly urls = new Set<string>()
  /** Here-document bodies that only feed data to a program (cat, tee, psql…), by offset in the command. */
  readonly dataHeredocs: { start: number; end: number }[] = []
  /** The directory a literal `cd /abs` (or `cd ~`) moved to earlier in the command, if known. */
  private cwd: string | undefined

  /** Functions being expanded (a recursive function is not expanded into itself). */
  private readonly calling = new Set<string>()
  private calls = 0

  constructor(ctx: ParseContext, ectx: ExpandContext) {
    this.ctx = ctx
    this.ectx = ectx
  }

  /** `top` = the script's positions are offsets in the original command. */
  walk(script: Script, depth: number, top: boolean): void {
    if (depth > MAX_WALK_DEPTH) {
      this.ctx.tooComplex = true
      return
    }
    for (const pipeline of script.pipelines) {
      const commands = pipeline.commands.map((command) => expanded(command, this.ectx))
      const cores = commands.map((command) => commandCore(withEvaluatedProgram(command)))
      commands.forEach((command, index) => {
        const written = pipeline.commands[index]!
        // As written, before expansion (`rm -rf /*` names the root itself).
        if (command !== written) {
          const core = commandCore(withEvaluatedProgram(written))
          this.lines.push(renderItems(written.items))
          if (renderItems(core) !== renderItems(written.items)) this.lines.push(renderItems(core))
        }
        this.command(command, cores, index, depth, top)
      })
      if (pipeline.commands.length > 1) this.lines.push(cores.map((core) => renderItems(core)).join(' | '))
    }
  }

  private command(command: SimpleCommand, cores: readonly Item[][], index: number, depth: number, top: boolean): void {
    const core = cores[index]!
    const name = coreWords(core)[0]?.value ?? ''
    const original = renderItems(command.items)
    let stripped = renderItems(core)
    for (const sub of command.subs) this.walk(sub, depth + 1, top)
    this.collectUrls(command, name)
    const shellStdin = readsScriptFromStdin(core)
    const interpreter = INTERPRETERS.test(name)
    // An interpreter's here-document (python3 - <<EOF) is its program: shown on its line.
    for (const item of core) {
      if (item.kind === 'redirect' && item.heredoc !== undefined && interpreter && !shellStdin) stripped += ` ${showLiteral(item.heredoc.body)}`
    }
    if (original !== '') this.lines.push(original)
    if (stripped !== '' && stripped !== original) this.lines.push(stripped)
    const resolved = this.followDirectory(name, core)
    if (resolved !== undefined && resolved !== stripped) this.lines.push(resolved)
    let fedByRedirect = false
    for (const item of core) {
      if (item.kind !== 'redirect') continue
      if (item.heredoc !== undefined) {
        fedByRedirect = true
        if (shellStdin) this.parseAndWalk(item.heredoc.body, depth + 1)
        else if (!interpreter && top) this.dataHeredocs.push({ start: item.heredoc.start, end: item.heredoc.end })
      } else if (item.op.endsWith('<<<') && item.target !== undefined) {
        fedByRedirect = true
        const data = wordData(item.target)
        if (data !== undefined && (shellStdin || interpreter)) {
          if (data !== item.target.value) this.addDecoded(data)
          if (shellStdin) this.parseAndWalk(data, depth + 1)
        }
      }
    }
    for (const embedded of embeddedScripts(core)) {
      const word = embedded.word
      const text = embedded.text ?? (word === undefined ? undefined : wordData(word))
      if (text === undefined) continue
      if (word !== undefined && text !== word.value) this.addDecoded(text)
      this.parseAndWalk(text, depth + 1, embedded.positional)
    }
    // A shell function defined in the input: its body runs with these arguments.
    const body = this.ctx.functions.get(name)
    if (body !== undefined && !this.calling.has(name) && coreWords(core)[0]?.quoted !== true) {
      // More calls than this make the input too complex (each call re-reads the body).
      if ((this.calls += 1) > MAX_FUNCTION_CALLS) {
        this.ctx.tooComplex = true
        return
      }
      this.calling.add(name)
      this.parseAndWalk(
        body,
        depth + 1,
        coreWords(core)
          .slice(1)
          .map((w) => w.value),
      )
      this.calling.delete(name)
    }
    // `python3 -c "…"`, `perl -e '…'`: the shell commands the code amounts to.
    if (interpreter) {
      const programs = interpreterCode(core).map((w) => wordData(w) ?? w.value)
      for (const item of core) {
        if (item.kind !== 'redirect') continue
        if (item.heredoc !== undefined) programs.push(item.heredoc.body)
        else if (item.op.endsWith('<<<') && item.target !== undefined) programs.push(wordData(item.target) ?? item.target.value)
      }
      if (index > 0 && interpreterReadsStdin(core)) {
        const data = pipelineData(cores.slice(0, index))
        if (data !== undefined) programs.push(data)
      }
      for (const program of programs) {
        for (const equivalent of inlineCodeCommands(program)) this.parseAndWalk(equivalent, depth + 1)
      }
    }
    // `bash <(echo … | base64 -d)`, `source <(…)`: a process substitution as the script.
    if (SHELLS.has(name) || interpreter || name === 'source' || name === '.') {
      for (const word of coreWords(core)) {
        if (word.procSub === undefined) continue
        const data = scriptData(word.procSub)
        if (data === undefined) continue
        this.addDecoded(data)
        if (!interpreter) this.parseAndWalk(data, depth + 1)
      }
    }
    // `echo … | base64 -d | sh`: what the pipeline feeds a shell or an interpreter.
    if (index > 0 && !fedByRedirect && (shellStdin || interpreterReadsStdin(core))) {
      const data = pipelineData(cores.slice(0, index))
      if (data !== undefined) {
        this.addDecoded(data)
        if (shellStdin) this.parseAndWalk(data, depth + 1)
      }
    }
  }

  /**
   * Tracks `cd` to a literal absolute directory and shows the later commands
   * with relative arguments resolved against it: `cd / && rm -rf *` reads
   * `rm -rf /*`, `cd ~/.ssh && cat id_rsa` reads `cat ~/.ssh/id_rsa`.
   */
  private followDirectory(name: string, core: readonly Item[]): string | undefined {
    const args = coreWords(core)
      .slice(1)
      .filter((w) => !w.value.startsWith('-'))
    if (name === 'cd' || name === 'pushd') {
      const target = args[0]?.value ?? '~'
      if (target.startsWith('/') || target.startsWith('~')) this.cwd = path.posix.normalize(target)
      else this.cwd = this.cwd === undefined ? undefined : path.posix.join(this.cwd, target)
      this.ectx.cwd =
        this.cwd?.startsWith('~') === true ? (this.ectx.home === undefined ? undefined : path.posix.join(this.ectx.home, this.cwd.slice(1))) : this.cwd
      return undefined
    }
    const cwd = this.cwd
    if (cwd === undefined) return undefined
    let changed = false
    const items = core.map((item, index): Item => {
      if (index === 0 || item.kind !== 'word') return item
      const v = item.word.value
      if (v.startsWith('-') || v.startsWith('/') || v.startsWith('~') || v.startsWith('$') || v.includes('=') || v.includes('://')) return item
      changed = true
      const joined = path.posix.join(cwd, v)
      return { kind: 'word', word: { ...item.word, value: joined, shown: showLiteral(joined) } }
    })
    return changed ? renderItems(items) : undefined
  }

  /** A decoded payload for the text view, within the expansion budget. */
  private addDecoded(data: string): void {
    if (spend(this.ctx, data.length)) this.decoded.push(data)
  }

  /** Parses and walks a script; `positional` are its `$1`, `$2`, … when known. */
  private parseAndWalk(text: string, depth: number, positional?: readonly string[]): void {
    if (depth > MAX_WALK_DEPTH) {
      this.ctx.tooComplex = true
      return
    }
    if (!spend(this.ctx, text.length)) return
    const saved = this.ctx.positional
    this.ctx.positional = positional
    let script: Script
    try {
      script = parseShell(text, this.ctx)
    } finally {
      this.ctx.positional = saved
    }
    this.walk(script, depth, false)
  }

  private collectUrls(command: SimpleCommand, name: string): void {
    for (const item of command.items) {
      const word = item.kind === 'word' ? item.word : item.target
      if (word === undefined) continue
      for (const m of word.value.matchAll(URL_IN_TEXT)) this.urls.add(m[0])
      // `curl 169.254.169.254/latest` names a host without a scheme.
      if (FETCHERS.has(name) && item.kind === 'word' && !word.value.startsWith('-') && !word.value.includes('://') && !word.value.includes('=')) {
        const host = word.value.split('/')[0]!
        if (/^\[?[\w.:%-]+\]?$/.test(host) && /[.:]|^\d+$/.test(host)) this.urls.add(`http://${word.value}`)
      }
    }
  }
}
