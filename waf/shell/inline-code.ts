/**
 * Inline interpreter code (`python3 -c`, `perl -e`, `ruby -e`, `node -e`,
 * `php -r`, and a program fed on stdin) read as the shell commands it is
 * equivalent to, so every command rule applies to it:
 *
 * - a command handed to a shell or run directly — `os.system("…")`,
 *   `subprocess.run([...])`, `system(q{…})`, backticks, `qx{…}`, `%x{…}`,
 *   `execSync("…")`, `spawnSync("rm", ["-rf", "/"])` — is that command;
 * - a file operation on a literal path is the shell command that does the
 *   same: `shutil.rmtree(P)`, `fs.rmSync(P)`, `FileUtils.rm_rf(P)`,
 *   `unlink P` → `rm -rf P`; opening P for writing → `: > P`; reading it
 *   (`open(P)`, `readFileSync(P)`, `File.read(P)`) → `cat P`; `chmod` → `chmod`.
 *
 * Only string literals are read (concatenations and `os.path.join`/`path.join`
 * of literals, and the home directory spelled as `expanduser('~')`,
 * `os.homedir()`, `ENV['HOME']`, `$ENV{HOME}`): code that computes a path is
 * beyond a pattern WAF.
 */

/** A string literal in any of the languages (Python prefixes, Perl q/qq, Ruby %q/%Q/%x, JS templates). */
const STRING = String.raw`(?:[rRbBuUfF]{0,2}"""[\s\S]{0,1000}?"""|[rRbBuUfF]{0,2}'''[\s\S]{0,1000}?'''|[rRbBuUfF]{0,2}"(?:\\[\s\S]|[^"\\]){0,1000}"|[rRbBuUfF]{0,2}'(?:\\[\s\S]|[^'\\]){0,1000}'|\x60(?:\\[\s\S]|[^\x60\\]){0,1000}\x60|(?:qq?|%[qQ]?)\s{0,2}(?:\{[^{}]{0,1000}\}|\([^()]{0,1000}\)|\[[^\][]{0,1000}\]|<[^<>]{0,1000}>|\/[^/]{0,1000}\/|\|[^|]{0,1000}\||![^!]{0,1000}!|#[^#]{0,1000}#|~[^~]{0,1000}~))`
const HOME_EXPR =
  /os\.path\.expanduser\(\s*['"]~['"]\s*\)|os\.homedir\(\)|Path\.home\(\)|(?:os\.environ|ENV|process\.env)\s*(?:\[\s*['"]HOME['"]\s*\]|\.get\(\s*['"]HOME['"]\s*\)|\.HOME)|\$ENV\{\s*['"]?HOME['"]?\s*\}|Dir\.home|getenv\(\s*['"]HOME['"]\s*\)/g

/** Calls that hand their argument to a shell or run it as a program. */
const EXEC_CALL =
  /(?<![\w$])(?:os\.(?:system|popen|exec[lv]p?e?|spawn[lv]p?e?)|subprocess\.(?:run|call|check_call|check_output|Popen|getoutput|getstatusoutput)|commands\.getoutput|pty\.spawn|(?:child_process|cp)\.(?:exec|execSync|execFile|execFileSync|spawn|spawnSync)|execSync|execFileSync|spawnSync|execFile|Bun\.spawnSync|Bun\.spawn|Bun\.\$|IO\.popen|Open3\.(?:capture[23]e?|popen[23]e?|pipeline)|Kernel\.(?:system|exec|spawn|`)|system|exec|shell_exec|passthru|popen|proc_open|spawn)(?=\s{0,4}[(\s`'"qQ%[])/g
/** Backticks, `qx{…}` and `%x{…}`: a command run by a shell. */
const BACKTICK_CALL =
  /(?<![\w$\\])(?:`([^`]{1,1000})`|qx\s{0,2}(?:\{([^{}]{1,1000})\}|\(([^()]{1,1000})\)|\[([^\][]{1,1000})\]|([^\w\s])((?:(?!\5)[\s\S]){1,1000})\5)|%x(?:\{([^{}]{1,1000})\}|\(([^()]{1,1000})\)|\[([^\][]{1,1000})\]))/g
/** Deleting a file or a tree. */
const DELETE_CALL =
  /(?<![\w$])(?:shutil\.rmtree|rmtree|remove_tree|os\.(?:remove|unlink|rmdir|removedirs)|FileUtils\.(?:rm_rf|rm_r|rm_f|rm|remove_dir|remove_entry(?:_secure)?|remove|rmtree|rmdir)|(?:fs|fsp|fs\.promises|promises|fse)\.(?:rmSync|rmdirSync|unlinkSync|rm|rmdir|unlink|remove|removeSync|emptyDirSync|emptyDir)|File\.(?:delete|unlink)|Dir\.(?:delete|unlink|rmdir)|unlink|rmdir|rmSync|rmdirSync|unlinkSync|removeSync|Deno\.remove(?:Sync)?)(?=\s{0,4}[(\s'"qQ%])/g
/** Opening a file: for writing when a mode says so. */
const OPEN_CALL =
  /(?<![\w$])(?:open|io\.open|codecs\.open|File\.open|File\.new|IO\.write|File\.write|File\.binwrite|fs\.(?:writeFileSync|appendFileSync|writeFile|appendFile|createWriteStream|openSync|open)|fsp\.(?:writeFile|appendFile)|file_put_contents|fopen|Deno\.writeTextFile(?:Sync)?|Bun\.write)(?=\s{0,4}[(\s])/g
const READ_CALL =
  /(?<![\w$])(?:File\.(?:read|readlines|binread|foreach)|IO\.read|fs\.(?:readFileSync|readFile|createReadStream)|fsp\.readFile|file_get_contents|Deno\.readTextFile(?:Sync)?|Bun\.file)(?=\s{0,4}[(\s])/g
const CHMOD_CALL = /(?<![\w$])(?:os\.chmod|fs\.chmodSync|fs\.chmod|File\.chmod|FileUtils\.chmod|chmod)(?=\s{0,4}[(\s])/g
/** Methods on a path object: `Path('/etc').unlink()`, `Path(P).write_text(…)`. */
const PATH_METHOD = new RegExp(
  String.raw`(?<![\w$])(?:pathlib\.)?(?:Path|PurePath)\(\s{0,4}(${STRING})\s{0,4}\)\s{0,4}\.(unlink|rmdir|write_text|write_bytes|open|read_text|read_bytes|chmod)\(\s{0,4}(${STRING}|0o?\d{1,6})?`,
  'g',
)

const MAX_COMMANDS = 64
/** Code past this many characters is not read (the scan stays linear and small). */
export const MAX_CODE_CHARS = 64 * 1024
/** Calls looked at per kind. */
const MAX_CALLS = 256
const STRING_AT = new RegExp(STRING, 'y')
const STRINGS = new RegExp(STRING, 'g')
const first = <T>(it: Iterable<T>): T[] => {
  const out: T[] = []
  for (const x of it) {
    out.push(x)
    if (out.length >= MAX_CALLS) break
  }
  return out
}

/** The shell commands equivalent to the dangerous calls in `code` (any of the languages). */
export function inlineCodeCommands(code: string): string[] {
  const text = code.slice(0, MAX_CODE_CHARS).replace(HOME_EXPR, "'~'")
  const out: string[] = []
  const add = (command: string | undefined) => {
    if (command !== undefined && command.trim() !== '' && out.length < MAX_COMMANDS) out.push(command)
  }
  for (const m of first(text.matchAll(EXEC_CALL))) add(execArguments(text, m.index + m[0].length))
  for (const m of first(text.matchAll(BACKTICK_CALL))) add(m.slice(1).find((g, i) => g !== undefined && i !== 4))
  for (const m of first(text.matchAll(DELETE_CALL))) {
    const path = pathArgument(text, m.index + m[0].length)
    if (path !== undefined) add(`rm -rf ${quote(path)}`)
  }
  for (const m of first(text.matchAll(OPEN_CALL))) {
    const args = argumentList(text, m.index + m[0].length)
    // Perl's open(FH, '>', P) / open(FH, ">P"): the handle comes first.
    const strings = args.map(literalPath)
    const perl = /^\s*(?:my\s+)?[$\w]/.test(args[0] ?? '') && strings[0] === undefined
    const modeArg = perl ? strings[1] : strings[1]
    let path = perl ? (strings.length > 2 ? strings[2] : strings[1]) : strings[0]
    let writing = /^(?:fs\.(?:write|append|createWrite)|fsp\.|file_put|IO\.write|File\.(?:write|binwrite)|Deno\.write|Bun\.write)/.test(m[0])
    if (perl && path !== undefined) {
      const inline = /^\s*(\+?[<>]{1,2}|\|)?\s*([\s\S]*?)\s*$/.exec(path)!
      if (strings.length <= 2 && inline[1] !== undefined) {
        writing = inline[1].includes('>')
        path = inline[2]!
      } else if (modeArg !== undefined && strings.length > 2) writing = modeArg.includes('>')
    } else if (modeArg !== undefined && /^[rwaxb+t]{1,4}$/.test(modeArg)) writing ||= /[wax+]/.test(modeArg)
    else if (/^(?:fopen|File\.new|File\.open)$/.test(m[0]) && modeArg !== undefined) writing ||= /[wax+]/.test(modeArg)
    if (path !== undefined && path !== '') add(writing ? `: > ${quote(path)}` : `cat ${quote(path)}`)
  }
  for (const m of first(text.matchAll(READ_CALL))) {
    const path = pathArgument(text, m.index + m[0].length)
    if (path !== undefined) add(`cat ${quote(path)}`)
  }
  for (const m of first(text.matchAll(CHMOD_CALL))) {
    const args = argumentList(text, m.index + m[0].length)
    const mode = args
      .map((a) => /^\s*0?o?([0-7]{3,4})\s*$/.exec(a)?.[1] ?? /^\s*['"]([ugoa]*[+=-][rwxst]+|[0-7]{3,4})['"]\s*$/.exec(a)?.[1])
      .find((x) => x !== undefined)
    const path = args.map(literalPath).find((p) => p !== undefined && !/^[0-7]{3,4}$|^[ugoa]*[+=-][rwxst]+$/.test(p))
    if (mode !== undefined && path !== undefined) add(`chmod ${mode} ${quote(path)}`)
  }
  for (const m of first(text.matchAll(PATH_METHOD))) {
    const path = stringValue(m[1]!)
    if (path === undefined) continue
    const method = m[2]!
    if (method === 'unlink' || method === 'rmdir') add(`rm -rf ${quote(path)}`)
    else if (method.startsWith('write') || (method === 'open' && /[wax+]/.test(stringValue(m[3] ?? '') ?? ''))) add(`: > ${quote(path)}`)
    else if (method.startsWith('read') || method === 'open') add(`cat ${quote(path)}`)
    else if (method === 'chmod' && m[3] !== undefined) add(`chmod ${m[3].replace(/^0o?/, '')} ${quote(path)}`)
  }
  return out
}

/** What an exec-like call runs: a string is a shell command; a list (or a program and its list) is argv. */
function execArguments(text: string, at: number): string | undefined {
  const args = argumentList(text, at)
  if (args.length === 0) return undefined
  const first = args[0]!.trim()
  if (first.startsWith('[')) return argv(first)
  const command = literalPath(first)
  if (command === undefined) return undefined
  // spawn('rm', ['-rf', '/']), execFile(...), Open3.capture2('rm', '-rf', '/')
  const rest = args.slice(1).map((a) => a.trim())
  if (rest[0]?.startsWith('[')) {
    const list = argv(rest[0])
    return list === undefined ? quote(command) : `${quote(command)} ${list}`
  }
  const more = rest.map(literalPath).filter((x): x is string => x !== undefined)
  return more.length > 0 && more.length === rest.filter((r) => !/^\w+\s*[=:]/.test(r) && !r.startsWith('{')).length
    ? [command, ...more].map(quote).join(' ')
    : command
}

/** A list literal of strings as a shell command line. */
function argv(list: string): string | undefined {
  const items = [...list.matchAll(STRINGS)].map((m) => stringValue(m[0]))
  if (items.length === 0 || items.some((i) => i === undefined)) return undefined
  return (items as string[]).map(quote).join(' ')
}

/** The path a call's first argument names, when it is made of literals. */
function pathArgument(text: string, at: number): string | undefined {
  const args = argumentList(text, at)
  return args[0] === undefined ? undefined : literalPath(args[0])
}

/** A path expression of literals: a string, a concatenation, a join; undefined otherwise. */
function literalPath(expr: string): string | undefined {
  const e = expr.trim()
  const strings = [...e.matchAll(STRINGS)]
  if (strings.length === 0) return undefined
  const values = strings.map((m) => stringValue(m[0]))
  if (values.some((v) => v === undefined)) return undefined
  if (strings.length === 1 && strings[0]!.index === 0 && strings[0]![0].length === e.length) return values[0]
  if (/\bjoin\s*\(|File\.join|joinpath/.test(e)) return (values as string[]).join('/').replace(/\/{2,}/g, '/')
  if (/^[\s+.]*$/.test(e.replace(STRINGS, ''))) return (values as string[]).join('')
  // A wrapper around one literal: Path('/etc'), expanduser('~/.ssh/id_rsa'), File.expand_path('~/.aws').
  if (strings.length === 1) return values[0]
  return undefined
}

/** The value of one string literal (escapes kept as written, except `\'` `\"`). */
function stringValue(literal: string): string | undefined {
  const m = /^(?:[rRbBuUfF]{0,2})("""|'''|"|'|`)([\s\S]*)\1$/.exec(literal)
  if (m !== null) return m[2]!.replace(/\\(['"`\\])/g, '$1')
  const q = /^(?:qq?|%[qQ]?)\s{0,2}([\s\S])([\s\S]*)[\s\S]$/.exec(literal)
  return q === null ? undefined : q[2]
}

/** The top-level, comma-separated arguments of a call at `at` (after the name): `(a, b)` or Perl/Ruby's `name a, b`. */
function argumentList(text: string, at: number): string[] {
  let i = at
  while (text[i] === ' ' || text[i] === '\t') i += 1
  const paren = text[i] === '('
  if (paren) i += 1
  const args: string[] = []
  let depth = 0
  let start = i
  const limit = Math.min(text.length, i + 1000)
  for (; i < limit; i += 1) {
    const c = text[i]!
    const quoteChar = /["'`]/.test(c)
    if (quoteChar || (/[qQ%rRbBuUfF]/.test(c) && (i === 0 || !/\w/.test(text[i - 1]!)))) {
      STRING_AT.lastIndex = i
      const s = STRING_AT.exec(text)
      if (s !== null) {
        i += s[0].length - 1
        continue
      }
      if (quoteChar) break // an unterminated string: the rest is not read
    }
    if (c === '(' || c === '[' || c === '{') depth += 1
    else if (c === ')' || c === ']' || c === '}') {
      if (depth === 0) break
      depth -= 1
    } else if (depth === 0 && c === ',') {
      args.push(text.slice(start, i))
      start = i + 1
    } else if (depth === 0 && !paren && (c === ';' || c === '\n' || /\b(?:or|and|if|unless)\b/y.test(text.slice(i, i + 7)))) break
  }
  const last = text.slice(start, i)
  if (last.trim() !== '' || args.length > 0) args.push(last)
  return args
}

/** Single-quotes a word for the shell when it needs it. */
function quote(word: string): string {
  return /^[\w@%+=:,./~-]+$/.test(word) ? word : `'${word.replaceAll("'", `'\\''`)}'`
}
