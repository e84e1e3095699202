import path from 'node:path'

/**
 * Canonical forms of file paths and URLs, so one rule covers the spellings:
 * `$HOME/.ssh/id_rsa`, `${HOME}/.ssh/id_rsa` and `/home/me/.ssh/id_rsa` (with
 * `home: '/home/me'`) all read `~/.ssh/id_rsa`; `/tmp/../etc/shadow` reads
 * `/etc/shadow`; `http://2852039166/` reads `http://169.254.169.254/`.
 */

export interface LocationOptions {
  /** The home directory of the user the CLI runs as, shown as `~`. */
  home?: string
}

/** A path with `..`/`.`/`//` resolved and the home directory shown as `~`. */
export function normalizePath(raw: string, options: LocationOptions = {}): string {
  let p = raw.trim().replace(/^(?:\$\{HOME\}|\$HOME)(?=\/|$)/, '~')
  if (p === '') return p
  p = path.posix.normalize(p)
  const home = options.home === undefined ? undefined : path.posix.normalize(options.home).replace(/\/+$/, '')
  if (home !== undefined && home !== '' && home !== '/' && (p === home || p.startsWith(`${home}/`))) p = `~${p.slice(home.length)}`
  return p.length > 1 ? p.replace(/\/+$/, '') : p
}

/**
 * The URL as written (lowercased scheme and host) and, when it differs, as a
 * browser or curl would resolve it: numeric IPv4 hosts in decimal, octal or
 * hex become dotted, IPv6-mapped IPv4 is shown in hex (`[::ffff:a9fe:a9fe]`).
 */
export function urlForms(raw: string): string[] {
  const forms = [raw]
  try {
    const url = new URL(/^[a-z][a-z0-9+.-]*:\/\//i.test(raw) ? raw : `http://${raw}`)
    const canonical = `${url.protocol}//${url.host}${url.pathname}${url.search}`
    if (canonical !== raw) forms.push(canonical)
  } catch {
    // Not a URL a client would accept; the raw form is still inspected.
  }
  return forms
}
