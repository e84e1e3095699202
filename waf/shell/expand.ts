/**
 * Brace and pathname (glob) expansion, as bash does them before a command
 * runs: `rm -rf /{etc,usr}` runs `rm -rf /etc /usr`, `rm -rf /et?` and
 * `rm -rf /[e]tc` run `rm -rf /etc` on a machine that has /etc.
 *
 * Words arrive as patterns (see Word.pattern): characters that were quoted
 * or escaped in the command carry a backslash, so only what bash would
 * expand is expanded. Globs are matched against a filesystem view passed in
 * (the runner gives the real one, tests a fake); without one, a standard
 * Linux root layout is used so `/et?` still reads `/etc`. The work is
 * bounded: at most MAX_WORDS words per brace, MAX_LISTINGS directory reads
 * and MAX_MATCHES matches per input.
 */

/** Directory listings, for glob expansion. Pure from the matcher's point of view: it is passed in. */
export interface FsView {
  /** The directory relative paths are resolved from (the tool call's working directory). */
  cwd?: string
  /** The names in an absolute directory (dotfiles included), or undefined when it cannot be read. */
  list(dir: string): readonly string[] | undefined
}

/** The expansion state of one input: the view and what is left of its budget. */
export interface ExpandContext {
  fs: FsView
  /** The user's home directory, for `~/…` patterns. */
  home?: string | undefined
  /** The directory a literal `cd` in the command moved to, when known (overrides fs.cwd). */
  cwd?: string | undefined
  listings: number
  matches: number
}

export const MAX_WORDS = 256
export const MAX_LISTINGS = 256
export const MAX_MATCHES = 4096
/** Longer words are not expanded (brace matching is quadratic in the worst case). */
export const MAX_PATTERN_CHARS = 1024

/** The top of a standard Linux filesystem (FHS), used when no filesystem view is given. */
const STANDARD_DIRS: Record<string, readonly string[]> = {
  '/': ['bin', 'boot', 'dev', 'etc', 'home', 'lib', 'lib32', 'lib64', 'media', 'mnt', 'opt', 'proc', 'root', 'run', 'sbin', 'srv', 'sys', 'tmp', 'usr', 'var'],
  '/usr': ['bin', 'include', 'lib', 'lib64', 'libexec', 'local', 'sbin', 'share', 'src'],
  '/var': ['backups', 'cache', 'lib', 'local', 'lock', 'log', 'mail', 'opt', 'run', 'spool', 'tmp'],
  '/etc': [
    'passwd',
    'shadow',
    'group',
    'gshadow',
    'sudoers',
    'sudoers.d',
    'hosts',
    'crontab',
    'cron.d',
    'profile',
    'profile.d',
    'ssh',
    'systemd',
    'pam.d',
    'fstab',
    'ld.so.preload',
  ],
}

/** The standard root layout as a view: absolute directories only. */
export const STANDARD_FS: FsView = { list: (dir) => STANDARD_DIRS[dir] }

export function newExpandContext(fs: FsView | undefined, home: string | undefined): ExpandContext {
  return { fs: fs ?? STANDARD_FS, home, listings: 0, matches: 0 }
}

/** Characters with a meaning in a pattern; a literal one is escaped with a backslash. */
const SPECIAL = /[\\*?[\]{},]/g

/** A literal text as a pattern. */
export function escapePattern(text: string): string {
  return text.replace(SPECIAL, (c) => `\\${c}`)
}

/** Removes the escapes of a pattern. */
export function unescapePattern(pattern: string): string {
  return pattern.replace(/\\([\s\S])/g, '$1')
}

/** The words a pattern expands to (braces, then globs); the pattern's literal value when nothing expands. */
export function expandPattern(pattern: string, ctx: ExpandContext): string[] {
  if (pattern.length > MAX_PATTERN_CHARS || ctx.matches >= MAX_MATCHES) return [unescapePattern(pattern)]
  const out: string[] = []
  const words = expandBraces(pattern)
  ctx.matches += words.length - 1
  for (const word of words) {
    const matches = hasGlob(word) ? glob(word, ctx) : undefined
    if (matches === undefined || matches.length === 0) out.push(unescapePattern(word))
    else out.push(...matches)
  }
  return out
}

/** Brace expansion: `a{b,c}d` → `abd acd`, `{1..3}` → `1 2 3`, nested; `{x}` and `{}` stay. */
export function expandBraces(pattern: string): string[] {
  let results = ['']
  let rest = pattern
  for (;;) {
    const open = findBrace(rest)
    if (open === undefined) return results.map((r) => r + rest)
    const prefix = rest.slice(0, open.start)
    // Each alternative may hold further groups (`{a,b{c,d}}`).
    const alternatives = open.parts.flatMap((part) => expandBraces(part)).slice(0, MAX_WORDS)
    const next: string[] = []
    for (const r of results) {
      for (const alt of alternatives) {
        if (next.length >= MAX_WORDS) break
        next.push(r + prefix + alt)
      }
    }
    results = next
    rest = rest.slice(open.end + 1)
  }
}

/** The first brace group that expands: its offsets and alternatives. */
function findBrace(pattern: string): { start: number; end: number; parts: string[] } | undefined {
  for (let i = 0; i < pattern.length; i += 1) {
    const c = pattern[i]
    if (c === '\\') {
      i += 1
      continue
    }
    if (c !== '{') continue
    // Find the matching close and the top-level commas.
    let depth = 0
    const commas: number[] = []
    let close = -1
    for (let j = i; j < pattern.length; j += 1) {
      const d = pattern[j]
      if (d === '\\') {
        j += 1
        continue
      }
      if (d === '{') depth += 1
      else if (d === '}') {
        depth -= 1
        if (depth === 0) {
          close = j
          break
        }
      } else if (d === ',' && depth === 1) commas.push(j)
    }
    if (close === -1) return undefined
    const body = pattern.slice(i + 1, close)
    if (commas.length > 0) {
      const bounds = [i, ...commas, close]
      const parts = bounds.slice(0, -1).map((b, k) => pattern.slice(b + 1, bounds[k + 1]))
      return { start: i, end: close, parts }
    }
    const range = sequence(body)
    if (range !== undefined) return { start: i, end: close, parts: range }
    // `{x}` is literal: look for a later group.
  }
  return undefined
}

/** `{1..5}`, `{a..e}`, `{0..10..2}`; undefined when the body is not a sequence. */
function sequence(body: string): string[] | undefined {
  const m = /^(-?\d{1,6}|[a-zA-Z])\.\.(-?\d{1,6}|[a-zA-Z])(?:\.\.(-?\d{1,6}))?$/.exec(body)
  if (m === null) return undefined
  const numeric = /\d/.test(m[1]!)
  if (numeric !== /\d/.test(m[2]!)) return undefined
  const from = numeric ? Number(m[1]) : m[1]!.charCodeAt(0)
  const to = numeric ? Number(m[2]) : m[2]!.charCodeAt(0)
  const step = Math.max(1, Math.abs(Number(m[3] ?? 1)))
  const out: string[] = []
  for (let v = from; from <= to ? v <= to : v >= to; v += from <= to ? step : -step) {
    if (out.length >= MAX_WORDS) break
    out.push(numeric ? String(v) : escapePattern(String.fromCharCode(v)))
  }
  return out
}

/** True when the pattern has an unescaped `*`, `?` or `[`. */
function hasGlob(pattern: string): boolean {
  for (let i = 0; i < pattern.length; i += 1) {
    const c = pattern[i]
    if (c === '\\') i += 1
    else if (c === '*' || c === '?' || c === '[') return true
  }
  return false
}

/** The paths a glob matches, written the way the pattern was (absolute, `~/…` or relative); undefined when it cannot be read. */
function glob(pattern: string, ctx: ExpandContext): string[] | undefined {
  let base: string
  let shownBase: string
  let rest: string
  if (pattern.startsWith('/')) {
    base = '/'
    shownBase = '/'
    rest = pattern.replace(/^\/+/, '')
  } else if (pattern === '~' || pattern.startsWith('~/')) {
    if (ctx.home === undefined) return undefined
    base = ctx.home
    shownBase = '~/'
    rest = pattern.slice(2)
  } else {
    const cwd = ctx.cwd ?? ctx.fs.cwd
    if (cwd === undefined) return undefined
    base = cwd
    shownBase = ''
    rest = pattern
  }
  const segments = rest.split(/\/+/)
  let found: { dir: string; shown: string }[] = [{ dir: base, shown: shownBase }]
  let globbed = false
  for (const segment of segments) {
    if (segment === '') continue
    const next: { dir: string; shown: string }[] = []
    const matcher = hasGlob(segment) ? segmentRegex(segment) : undefined
    const literal = unescapePattern(segment)
    for (const { dir, shown } of found) {
      const join = (name: string) => ({
        dir: dir === '/' ? `/${name}` : `${dir}/${name}`,
        shown: shown === '' || shown.endsWith('/') ? `${shown}${name}` : `${shown}/${name}`,
      })
      if (matcher === undefined) {
        // A literal segment needs no listing unless an earlier segment globbed (bash checks such paths exist).
        if (!globbed) next.push(join(literal))
        else if (literal === '.' || literal === '..' || (list(ctx, dir)?.includes(literal) ?? false)) next.push(join(literal))
        continue
      }
      const names = list(ctx, dir)
      if (names === undefined) continue
      for (const name of [...names].sort()) {
        if (name.startsWith('.') && !literalDotStart(segment)) continue
        if (!matcher.test(name)) continue
        if (ctx.matches >= MAX_MATCHES) return next.map((n) => n.shown)
        ctx.matches += 1
        next.push(join(name))
      }
    }
    if (matcher !== undefined) globbed = true
    found = next
    if (found.length === 0) return []
  }
  return found.map((f) => (pattern.endsWith('/') ? `${f.shown}/` : f.shown))
}

function list(ctx: ExpandContext, dir: string): readonly string[] | undefined {
  if (ctx.listings >= MAX_LISTINGS) return undefined
  ctx.listings += 1
  try {
    return ctx.fs.list(dir)
  } catch {
    return undefined
  }
}

/** A dotfile is matched only by a pattern that starts with a literal dot. */
function literalDotStart(segment: string): boolean {
  return segment.startsWith('.') || segment.startsWith('\\.')
}

/** One path segment's glob as an anchored regex. */
function segmentRegex(segment: string): RegExp {
  let source = ''
  for (let i = 0; i < segment.length; i += 1) {
    const c = segment[i]!
    if (c === '\\') {
      i += 1
      source += escapeRegex(segment[i] ?? '\\')
    } else if (c === '*') source += '[^/]*'
    else if (c === '?') source += '[^/]'
    else if (c === '[') {
      const end = classEnd(segment, i)
      if (end === undefined) source += '\\['
      else {
        let body = segment.slice(i + 1, end)
        let negate = false
        if (body.startsWith('!') || body.startsWith('^')) {
          negate = true
          body = body.slice(1)
        }
        const cls = body
          .replace(/\\(.)/g, '$1')
          .replace(/[\\\]^]/g, (x) => `\\${x}`)
          .replace(/\[:(\w+):\]/g, (_, n: string) => POSIX_CLASSES[n] ?? '')
        source += `[${negate ? '^' : ''}${cls}]`
        i = end
      }
    } else source += escapeRegex(c)
  }
  try {
    return new RegExp(`^${source}$`, 's')
  } catch {
    return /(?!)/
  }
}

const POSIX_CLASSES: Record<string, string> = {
  alpha: 'a-zA-Z',
  digit: '0-9',
  alnum: 'a-zA-Z0-9',
  lower: 'a-z',
  upper: 'A-Z',
  space: ' \\t',
  punct: '!-/:-@\\[-`{-~',
  xdigit: '0-9a-fA-F',
}

function classEnd(segment: string, open: number): number | undefined {
  let j = open + 1
  if (segment[j] === '!' || segment[j] === '^') j += 1
  if (segment[j] === ']') j += 1
  for (; j < segment.length; j += 1) {
    if (segment[j] === '\\') j += 1
    else if (segment[j] === '[' && segment[j + 1] === ':') {
      const close = segment.indexOf(':]', j + 2)
      if (close !== -1) j = close + 1
    } else if (segment[j] === ']') return j
  }
  return undefined
}

function escapeRegex(c: string): string {
  return c.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')
}
