/**
 * The shape the WAF's shell parser produces, and how it is shown in the
 * parsed view: a script is pipelines, a pipeline is simple commands, a simple
 * command is words and redirections in order.
 */

export interface Word {
  /** The word's value after quote removal and expansion, as the command receives it. */
  value: string
  /** The same, for display in a parsed view: literal `|`, `<`, `>` and line breaks replaced, substitutions normalised. */
  shown: string
  /** True when some part was quoted or escaped (so `{`, `}` and keywords are literal). */
  quoted: boolean
  /** When some unquoted `*?[{` may expand (brace or pathname expansion): the word with its quoted characters escaped (see expand.ts). */
  pattern?: string
  /** For an unquoted `NAME=` prefix: the variable name. */
  assigns?: string
  /** When the whole word is one `$(…)`/backtick substitution: its script. */
  onlySub?: Script
  /** When the whole word is one `<(…)`/`>(…)` process substitution: its script. */
  procSub?: Script
}

export interface Heredoc {
  body: string
  /** Offsets of the body in the source. */
  start: number
  end: number
}

export type Item = { kind: 'word'; word: Word } | { kind: 'redirect'; op: string; target: Word | undefined; heredoc?: Heredoc }

export interface SimpleCommand {
  items: Item[]
  /** Scripts of the substitutions inside this command (they run too). */
  subs: Script[]
}

export interface Pipeline {
  commands: SimpleCommand[]
}

export interface Script {
  pipelines: Pipeline[]
}

/** State shared by every parser of one input. */

/** Replaces characters that would read as shell syntax in a parsed view. */
export function showLiteral(text: string): string {
  return text.replace(/[|<>\n\r\t\0]/g, (c) => (c === '|' ? '¦' : c === '<' ? '‹' : c === '>' ? '›' : ' '))
}

/** A script as text: commands of a pipeline joined by ` | `, pipelines by ` ; `. */
export function renderScript(script: Script): string {
  return script.pipelines.map((p) => p.commands.map((c) => renderItems(c.items)).join(' | ')).join(' ; ')
}

/** A command's words and redirections, one space apart. */
export function renderItems(items: readonly Item[]): string {
  const parts: string[] = []
  for (const item of items) {
    if (item.kind === 'word') parts.push(item.word.shown)
    else parts.push(item.target === undefined ? item.op : `${item.op} ${item.target.shown}`)
  }
  return parts.join(' ')
}
