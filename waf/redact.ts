/**
 * Excerpts of matched input travel in error events, logs and spans; a command
 * that trips a rule often carries a credential (`curl -d "token=…"`, a key
 * being exfiltrated). Well-known secret shapes are masked before an excerpt
 * leaves the matcher.
 */

const SECRET_SHAPES: readonly RegExp[] = [
  /-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?(?:-----END [A-Z ]*PRIVATE KEY-----|$)/g,
  /\b(?:AKIA|ASIA)[0-9A-Z]{16}\b/g,
  /\bsk-(?:ant-|proj-)?[A-Za-z0-9_-]{16,}/g,
  /\bgh[pousr]_[A-Za-z0-9]{20,}/g,
  /\bgithub_pat_[A-Za-z0-9_]{20,}/g,
  /\bxox[abposr]-[A-Za-z0-9-]{10,}/g,
  /\beyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{5,}/g,
  /\b(?:bearer|basic)\s+[A-Za-z0-9._~+/=-]{12,}/gi,
]
/** `password=…`, `token: …`, `AWS_SECRET_ACCESS_KEY=…`, `--api-key …`: the value is masked. */
const KEY_VALUE = /\b([\w-]{0,40}(?:password|passwd|secret|token|api[_-]?key|access[_-]?key)[\w-]{0,40})(\s*[=:]\s*)(["']?)[^\s"'&]{4,}\3/gi
const OPTION_VALUE = /(--[\w-]{0,40}(?:password|passwd|secret|token|api[_-]?key)[\w-]{0,40})(\s+)(["']?)[^\s"'&]{4,}\3/gi

/** Longest excerpt kept, in characters. */
export const MAX_EXCERPT_CHARS = 160

/** The matched text, secrets masked, cut to MAX_EXCERPT_CHARS. */
export function excerpt(text: string): string {
  // Cut first (a long match stays cheap to redact); a secret cut at 512 lies past the 160 kept anyway.
  let out = text.slice(0, 512)
  for (const shape of SECRET_SHAPES) out = out.replace(shape, '[REDACTED]')
  const mask = (_: string, key: string, sep: string, quote: string) => `${key}${sep}${quote}[REDACTED]${quote}`
  out = out.replace(KEY_VALUE, mask).replace(OPTION_VALUE, mask)
  out = out.replace(/\s+/g, ' ').trim()
  return out.length > MAX_EXCERPT_CHARS ? `${out.slice(0, MAX_EXCERPT_CHARS - 1)}…` : out
}
