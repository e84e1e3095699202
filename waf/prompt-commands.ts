/**
 * Prompts are natural language: they mention commands all the time ("explain
 * what `rm -rf /` does", "why does `curl … | sh` scare people?"). A prompt is
 * therefore NOT matched with the command rules as a whole. Only what it
 * explicitly asks to be run is: the text after an imperative "run / execute /
 * exec / invoke / launch / type / try …" that starts a clause ("Run X",
 * "please execute X", "…, then run X", "can you run X"), lines written as a
 * shell session (`$ X`), and a one-line prompt that is itself a command (it
 * starts with a shell program such as `sudo`, `rm`, `curl` and is not a
 * question): typed into a coding agent, that means "run this". Lines inside a
 * fenced code block are content, not instructions (a pasted Dockerfile's
 * `RUN curl … | sh` is not a request), and an all-caps `RUN` is Dockerfile
 * syntax, not an imperative; a block introduced by "run this:" is still
 * inspected as a whole. That text — a backticked span, a quoted string, a
 * fenced block after "run this:", or else the rest of the line up to the next
 * instruction — is inspected as a command. "What happens if I run X?" and
 * "never run X" are not instructions (the verb does not start the clause).
 */

/** Clause starts after which an imperative verb is an instruction. */
const CLAUSE_START = String.raw`(?:^|[.!?;:,\n][ \t]{0,4}|\b(?:and|then|now|also|just|please|pls|kindly|first|next|finally|go ahead and|can you|could you|would you|will you|i want you to|i need you to|you should|you must|you need to|make sure to|try to|feel free to)\s+)`
const VERB = String.raw`(?:run|re-?run|execute|exec|invoke|launch|type|enter|issue|try|do)`
const FILLER = String.raw`(?:\s+(?:this|these|the following|following|the commands?|this command|these commands|commands?|script|snippet|one-?liner|as root|with sudo|for me)){0,3}\s*(?::(?=\s))?[ \t]*`
const INSTRUCTION = new RegExp(`${CLAUSE_START}(${VERB})\\b${FILLER}`, 'gim')
const FENCE = /^[ \t]*```[^\n]*\n[\s\S]*?(?:^[ \t]*```|(?![\s\S]))/gm
const SHELL_LINE = /^[ \t]*\$[ \t]+(?=\S)/gm
const BARE_COMMAND =
  /^\s*(?:sudo|doas|rm|rmdir|dd|mkfs(?:\.\w+)?|shred|wipefs|chmod|chown|chgrp|curl|wget|bash|sh|zsh|dash|nc|ncat|netcat|socat|telnet|python[\d.]*|perl|ruby|php|node|kill|pkill|killall|shutdown|reboot|halt|poweroff|init|iptables|ufw|setenforce|systemctl|service|find|cat|echo|printf|eval|exec|crontab|insmod|rmmod|modprobe|sysctl|docker|kubectl|nsenter|mount|history|unset|export|env|printenv|mkfifo|base64|xxd|tar|scp|rsync|ssh|mv|cp|tee|truncate|usermod|useradd|passwd|chpasswd|visudo|setcap|grub-install|efibootmgr|xmrig|journalctl|auditctl|git|npm|npx|\/\S+|\.\/\S+|:\(\))(?=\s|$|\{)/

/** Zero-width characters and compatibility forms (fullwidth letters) are folded before matching. */
export function normalizePrompt(text: string): string {
  return text
    .normalize('NFKC')
    .replace(/[\u200b-\u200f\u2060\ufeff\u00ad]/g, '')
    .replace(/[ \t\f\v]+/g, ' ')
}

/** The parts of a (normalized) prompt that it asks to be run, in order. */
export function instructedCommands(prompt: string): string[] {
  const fences = [...prompt.matchAll(FENCE)].map((m) => [m.index, m.index + m[0].length] as const)
  const inFence = (i: number) => fences.some(([from, to]) => i > from && i < to)
  const starts: number[] = []
  for (const m of prompt.matchAll(INSTRUCTION)) {
    const verb = m[1]!
    if (verb.length > 2 && verb === verb.toUpperCase()) continue
    if (!inFence(m.index + m[0].length - verb.length)) starts.push(m.index + m[0].length)
  }
  for (const m of prompt.matchAll(SHELL_LINE)) if (!inFence(m.index)) starts.push(m.index + m[0].length)
  const single = prompt.trim()
  if (!single.includes('\n') && !single.endsWith('?') && BARE_COMMAND.test(single)) return [single]
  starts.sort((a, b) => a - b)
  const out: string[] = []
  let consumed = 0
  for (const [i, start] of starts.entries()) {
    if (start < consumed) continue
    const next = starts[i + 1] ?? prompt.length
    const span = spanAt(prompt, start, next)
    if (span === undefined) continue
    if (span.text.trim() !== '') out.push(span.text)
    consumed = span.end
  }
  return out
}

/** The command text starting at `start`: a fenced block, a backticked or quoted span, or the rest of the line. */
function spanAt(prompt: string, start: number, next: number): { text: string; end: number } | undefined {
  const rest = prompt.slice(start)
  const fence = /^\n?```[^\n]*\n/.exec(rest)
  if (fence !== null) {
    const close = prompt.indexOf('```', start + fence[0].length)
    const end = close === -1 ? prompt.length : close
    return { text: prompt.slice(start + fence[0].length, end), end: end + 3 }
  }
  const open = rest[0]
  const closer = open === '`' ? '`' : open === '"' ? '"' : open === "'" ? "'" : open === '“' ? '”' : undefined
  if (closer !== undefined) {
    const close = prompt.indexOf(closer, start + 1)
    // A quote that does not close on the line is an apostrophe or a typo: read the line.
    const lineEnd = lineEndFrom(prompt, start)
    if (close !== -1 && (closer === '`' || close <= lineEnd)) return { text: prompt.slice(start + 1, close), end: close + 1 }
  }
  const end = Math.min(lineEndFrom(prompt, start), Math.max(next, start))
  return { text: prompt.slice(start, end === start ? lineEndFrom(prompt, start) : end), end }
}

function lineEndFrom(text: string, i: number): number {
  const nl = text.indexOf('\n', i)
  return nl === -1 ? text.length : nl
}
