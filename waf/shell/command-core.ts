import type { Item, SimpleCommand, Word } from './ast.ts'

/**
 * What a simple command really runs. `sudo -u root env FOO=1 nice -n 5 /bin/rm -rf /`
 * runs `rm -rf /`: wrappers (with their own options) and leading keywords are
 * stripped and the program path is reduced to its name, so rules can anchor on
 * the program at the start of a line.
 */

/** Options that take a separate argument, per wrapper; `positional` = arguments before the command. */
interface WrapperSpec {
  args?: readonly string[]
  positional?: number
  /** Words of the form NAME=value are skipped too (env). */
  assignments?: boolean
}

const WRAPPERS: Record<string, WrapperSpec> = {
  sudo: {
    args: [
      '-u',
      '-g',
      '-C',
      '-D',
      '-h',
      '-p',
      '-r',
      '-t',
      '-U',
      '-T',
      '-R',
      '--user',
      '--group',
      '--chdir',
      '--host',
      '--prompt',
      '--role',
      '--type',
      '--other-user',
      '--command-timeout',
      '--chroot',
      '--close-from',
    ],
  },
  doas: { args: ['-u', '-C'] },
  pkexec: { args: ['--user'] },
  env: { args: ['-u', '--unset', '-C', '--chdir', '-S', '--split-string'], assignments: true },
  nohup: {},
  setsid: {},
  stdbuf: { args: ['-i', '-o', '-e'] },
  nice: { args: ['-n', '--adjustment'] },
  ionice: { args: ['-c', '-n', '-p', '-t', '--class', '--classdata'] },
  chrt: { positional: 1 },
  taskset: { args: ['-c'], positional: 1 },
  timeout: { args: ['-s', '-k', '--signal', '--kill-after'], positional: 1 },
  time: { args: ['-f', '-o', '--format', '--output'] },
  command: {},
  builtin: {},
  exec: { args: ['-a'] },
  xargs: {
    args: [
      '-I',
      '-n',
      '-L',
      '-P',
      '-s',
      '-d',
      '-E',
      '-a',
      '-e',
      '-i',
      '-l',
      '--max-args',
      '--max-procs',
      '--delimiter',
      '--arg-file',
      '--replace',
      '--max-lines',
      '--max-chars',
      '--eof',
    ],
  },
  busybox: {},
  unbuffer: {},
  flock: { args: ['-w', '-E', '--timeout', '--conflict-exit-code'], positional: 1 },
  chroot: { args: ['--userspec', '--groups'], positional: 1 },
  strace: { args: ['-o', '-p', '-e', '-s', '-u', '-E'] },
  ltrace: { args: ['-o', '-p', '-e', '-s', '-u'] },
  proxychains: { args: ['-f'] },
  proxychains4: { args: ['-f'] },
  torsocks: {},
  fakeroot: {},
  runuser: { args: ['-u', '-g', '-G', '--user', '--group'] },
  npx: { args: ['-p', '--package'] },
  screen: { args: ['-S', '-c', '-L', '-Logfile'] },
  caffeinate: {},
  catchsegv: {},
  then: {},
  do: {},
  else: {},
  elif: {},
  if: {},
  while: {},
  until: {},
  '!': {},
}

export const SHELLS = new Set(['sh', 'bash', 'zsh', 'dash', 'ksh', 'mksh', 'ash', 'fish', 'rbash', 'tcsh', 'csh', 'yash', 'posh'])
export const INTERPRETERS = /^(?:python[\d.]*|pypy[\d.]*|perl[\d.]*|ruby[\d.]*|node|nodejs|bun|deno|php[\d.]*|lua[\d.]*|luajit|tclsh|Rscript|osascript)$/

/** A word of a command, by value. */
export const wordValues = (items: readonly Item[]): string[] => items.flatMap((i) => (i.kind === 'word' ? [i.word.value] : []))

/** The program name of a word: `/usr/bin/rm` → `rm`, `\rm` was already unescaped by the parser. */
export function programName(value: string): string {
  const slash = value.lastIndexOf('/')
  return slash >= 0 && slash < value.length - 1 ? value.slice(slash + 1) : value
}

/** The command with wrappers, keywords and leading assignments stripped; the program reduced to its name. */
export function commandCore(command: SimpleCommand): Item[] {
  const items = [...command.items]
  let index = 0
  const nextWord = () => {
    while (index < items.length && items[index]!.kind !== 'word') index += 1
    return index < items.length ? (items[index] as Item & { kind: 'word' }).word : undefined
  }
  // Leading assignments (`FOO=1 cmd`) are already known to the parser as variables.
  for (let w = nextWord(); w?.assigns !== undefined; w = nextWord()) items.splice(index, 1)
  for (let guard = 0; guard < 16; guard += 1) {
    const first = nextWord()
    if (first === undefined) break
    const spec = WRAPPERS[programName(first.value)]
    if (spec === undefined) break
    // `command -v x`, `sudo -l` and the like only look things up: they run nothing.
    const after = items.slice(index + 1).find((i) => i.kind === 'word')
    if (after?.kind === 'word' && /^-[vVlk]$/.test(after.word.value) && ['command', 'sudo', 'doas'].includes(programName(first.value))) break
    const before = items.slice()
    items.splice(index, 1)
    let positional = spec.positional ?? 0
    for (let w = nextWord(); w !== undefined; w = nextWord()) {
      const v = w.value
      if (v === '--') {
        items.splice(index, 1)
        break
      }
      if (v.startsWith('-') && v.length > 1) {
        items.splice(index, 1)
        const takesArg = spec.args?.includes(v) ?? false
        if (takesArg && nextWord() !== undefined) items.splice(index, 1)
        continue
      }
      if (spec.assignments === true && /^[A-Za-z_][A-Za-z0-9_]*=/.test(v)) {
        items.splice(index, 1)
        continue
      }
      if (positional > 0) {
        positional -= 1
        items.splice(index, 1)
        continue
      }
      break
    }
    // A wrapper alone (`env`, `sudo -i`) is the command itself.
    if (nextWord() === undefined) {
      items.splice(0, items.length, ...before)
      break
    }
  }
  const first = nextWord()
  if (first !== undefined) {
    const name = programName(first.value)
    if (name !== first.value) {
      items[index] = { kind: 'word', word: { ...first, value: name, shown: name } }
    }
  }
  return [...items.slice(0, index).filter((i) => i.kind === 'redirect'), ...items.slice(index)]
}

/** The word list of the core, as Words. */
export function coreWords(core: readonly Item[]): Word[] {
  return core.flatMap((i) => (i.kind === 'word' ? [i.word] : []))
}

/** What a core command hands to a shell: `-c` scripts, `eval` text, ssh/docker/kubectl exec commands, `find -exec`, `trap`. */
export function embeddedScripts(core: readonly Item[]): { text?: string; word?: Word; positional?: string[] }[] {
  const words = coreWords(core)
  const name = words[0]?.value
  if (name === undefined) return []
  const args = words.slice(1)
  if (SHELLS.has(name)) return shellDashC(args)
  switch (name) {
    case 'eval':
      return args.length === 1 ? [{ word: args[0]! }] : args.length > 0 ? [{ text: args.map((w) => w.value).join(' ') }] : []
    case 'su':
    case 'script': {
      const i = args.findIndex((w) => w.value === '-c' || w.value === '--command' || /^-[a-zA-Z]*c$/.test(w.value))
      const eq = args.find((w) => w.value.startsWith('--command='))
      if (eq !== undefined) return [{ text: eq.value.slice('--command='.length) }]
      return i >= 0 && args[i + 1] !== undefined ? [{ word: args[i + 1]! }] : []
    }
    case 'ssh':
      return sshCommand(args)
    case 'docker':
    case 'podman':
    case 'nerdctl':
      return containerExec(args)
    case 'kubectl':
    case 'oc': {
      if (args[0]?.value !== 'exec') return []
      const dash = args.findIndex((w) => w.value === '--')
      return dash >= 0 && dash + 1 < args.length
        ? [
            {
              text: args
                .slice(dash + 1)
                .map((w) => w.value)
                .join(' '),
            },
          ]
        : []
    }
    case 'find':
      return findExec(args)
    case 'watch': {
      let i = 0
      while (i < args.length && args[i]!.value.startsWith('-')) i += /^-(?:n|-interval)$/.test(args[i]!.value) ? 2 : 1
      return i < args.length
        ? [
            {
              text: args
                .slice(i)
                .map((w) => w.value)
                .join(' '),
            },
          ]
        : []
    }
    case 'trap':
      return args[0] !== undefined && !args[0].value.startsWith('-') ? [{ word: args[0] }] : []
    default:
      return []
  }
}

function shellDashC(args: readonly Word[]): { word?: Word; positional?: string[] }[] {
  for (let i = 0; i < args.length; i += 1) {
    const v = args[i]!.value
    if (v === '--') return []
    if (v === '-o' || v === '+o' || v === '--rcfile' || v === '--init-file') {
      i += 1
      continue
    }
    if (/^-[a-zA-Z]*c[a-zA-Z]*$/.test(v)) {
      // The script is the first argument that is not an option.
      for (let j = i + 1; j < args.length; j += 1) {
        // `sh -c 'rm -rf "$1"' name /`: the words after the script are $0, $1, …
        if (!/^[-+][a-zA-Z]+$/.test(args[j]!.value)) return [{ word: args[j]!, positional: args.slice(j + 2).map((w) => w.value) }]
      }
      return []
    }
    if (!v.startsWith('-') && !v.startsWith('+')) return []
  }
  return []
}

/** True when a core shell reads its script from stdin: no `-c`, no script file (or `-s`/`-`). */
export function readsScriptFromStdin(core: readonly Item[]): boolean {
  const words = coreWords(core)
  const name = words[0]?.value
  if (name === undefined) return false
  if (name === 'at' || name === 'batch') return true
  if (!SHELLS.has(name) && name !== 'ssh') {
    return false
  }
  if (name === 'ssh') return sshCommand(words.slice(1)).length === 0 && words.length > 1
  for (const w of words.slice(1)) {
    if (w.procSub !== undefined) return false
    if (w.value === '-' || w.value === '-s' || w.value === '--') return true
    if (/^-[a-zA-Z]*c[a-zA-Z]*$/.test(w.value)) return false
    if (!w.value.startsWith('-') && !w.value.startsWith('+')) return false
  }
  return true
}

/** The inline program of a core interpreter: `python3 -c CODE`, `perl -e CODE`, `node -e CODE`, `php -r CODE`. */
export function interpreterCode(core: readonly Item[]): Word[] {
  const words = coreWords(core)
  const name = words[0]?.value
  if (name === undefined || !INTERPRETERS.test(name)) return []
  const out: Word[] = []
  for (let i = 1; i < words.length; i += 1) {
    const v = words[i]!.value
    if (/^(?:-[a-zA-Z]*[ceEr]|--eval|--print|--command|-p)$/.test(v) && words[i + 1] !== undefined) {
      out.push(words[i + 1]!)
      i += 1
    } else if (/^--(?:eval|print)=/.test(v)) out.push({ ...words[i]!, value: v.slice(v.indexOf('=') + 1) })
    else if (!v.startsWith('-')) break // a script file: its arguments follow
  }
  return out
}

/** True when a core interpreter (python, perl, …) reads its program from stdin. */
export function interpreterReadsStdin(core: readonly Item[]): boolean {
  const words = coreWords(core)
  const name = words[0]?.value
  if (name === undefined || !INTERPRETERS.test(name)) return false
  for (const w of words.slice(1)) {
    if (w.value === '-') return true
    if (/^(?:-[cemrpE]|--eval|--print|--command)$/.test(w.value)) return false // the program is inline
    if (!w.value.startsWith('-')) return false // a script file
  }
  return true
}

const SSH_ARGS = new Set(['-B', '-b', '-c', '-D', '-E', '-e', '-F', '-I', '-i', '-J', '-L', '-l', '-m', '-O', '-o', '-p', '-Q', '-R', '-S', '-W', '-w'])

function sshCommand(args: readonly Word[]): { text: string }[] {
  let i = 0
  while (i < args.length) {
    const v = args[i]!.value
    if (SSH_ARGS.has(v)) i += 2
    else if (v.startsWith('-')) i += 1
    else break
  }
  const rest = args.slice(i + 1)
  return rest.length > 0 ? [{ text: rest.map((w) => w.value).join(' ') }] : []
}

const DOCKER_EXEC_ARGS = new Set(['-e', '--env', '-u', '--user', '-w', '--workdir', '--env-file', '--detach-keys'])

function containerExec(args: readonly Word[]): { text: string }[] {
  let i = args[0]?.value === 'container' ? 1 : 0
  if (args[i]?.value !== 'exec') return []
  i += 1
  while (i < args.length) {
    const v = args[i]!.value
    if (DOCKER_EXEC_ARGS.has(v)) i += 2
    else if (v.startsWith('-')) i += 1
    else break
  }
  const rest = args.slice(i + 1)
  return rest.length > 0 ? [{ text: rest.map((w) => w.value).join(' ') }] : []
}

function findExec(args: readonly Word[]): { text: string }[] {
  const out: { text: string }[] = []
  for (let i = 0; i < args.length; i += 1) {
    if (!/^-(?:exec|execdir|ok|okdir)$/.test(args[i]!.value)) continue
    const parts: string[] = []
    for (i += 1; i < args.length && args[i]!.value !== ';' && args[i]!.value !== '+'; i += 1) parts.push(args[i]!.value)
    if (parts.length > 0) out.push({ text: parts.join(' ') })
  }
  return out
}
