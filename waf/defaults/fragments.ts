import type { WafCategory, WafLevel, WafRule, WafTarget } from '../rule.ts'

/**
 * Regex pieces shared by the default rules. Every rule is still plain data (a
 * pattern string); these only keep one spelling of "a home directory" or "a
 * block device" across rules. Gaps are bounded (`{0,400}`) and multi-part
 * conditions use lookaheads from one anchor, so each rule costs time linear in
 * the input (see README "Linear time").
 *
 * Rules on the `command` view use the `m` flag: `^` is the start of a simple
 * command or pipeline (see rules.ts); words are one space apart and redirections
 * read `> target`.
 */

/** Fills the schema defaults of a default rule. */
export function rule(r: {
  id: string
  pattern: string
  flags?: string
  category: WafCategory
  level?: WafLevel
  description: string
  applies_to: WafTarget[]
}): WafRule {
  return { flags: '', level: 'block', enabled: true, ...r }
}

/** End of a word in a view. */
export const END = String.raw`(?=[\s;&|)'",]|$)`

/** A home directory: `~`, `~user`, `$HOME`, `/root`, `/home/x`, `/Users/x`. */
export const HOME = String.raw`(?:~[\w.-]{0,32}|\$\{?HOME\}?|/root|/home/[\w.-]{1,64}|/Users/[\w.-]{1,64})`

/** Top-level system directories. */
const SYSDIR_TOP = String.raw`(?:bin|boot|dev|etc|home|lib|lib32|lib64|libx32|opt|proc|root|run|sbin|srv|sys|usr|var|mnt|media|snap|nix)`

/** Top-level system directories and the important ones one level down. */
export const SYSDIR = String.raw`(?:${SYSDIR_TOP}|usr/(?:bin|sbin|lib\w{0,8}|local|share|include|src)|var/(?:lib|log|spool|backups|mail))`

// The root: /, /., /.., /* and /.* and /*/* (globs of it).
const ROOT = String.raw`/{1,8}(?:\.{1,2}/{0,8}){0,4}(?:\*|\.\*)?(?:/{1,8}\*){0,3}/{0,8}`

/** The filesystem root or a top-level system directory (with `/`, `/*`): `chown -R me /usr/local` stays allowed. */
export const ROOT_OR_SYSTEM = String.raw`(?:${ROOT}|/{1,8}${SYSDIR_TOP}/{0,8}\*?)${END}`

/** Also a home directory itself (`~`, `~/`, `~/*`, `~/.*`) or the parent of the sandbox (`..`, `../*`). */
export const ROOT_HOME_OR_SYSTEM = String.raw`(?:${ROOT}|/{1,8}${SYSDIR}/{0,8}\*?|${HOME}(?:/{1,8}(?:\.?\*)?)?|(?:\./{1,8})?\.\.(?:/{1,8}\.\.){0,6}/{0,8}\*?)${END}`

/** A block device (disk, partition, NVMe, MMC, RAID, LVM, loop). */
export const DISK = String.raw`/dev/(?:(?:[shv]|xv)d[a-z]{1,2}\d{0,3}|nvme\d{1,3}(?:n\d{1,3})?(?:p\d{1,3})?|mmcblk\d{1,3}(?:p\d{1,3})?|md\d{1,3}|dm-\d{1,3}|loop\d{1,3}|disk\d{1,3}(?:s\d{1,3})?|mapper/[\w.-]{1,64}|root|sr\d|mtdblock\d{1,3}|disk/by-[\w-]{1,16}/[\w.:-]{1,128})(?=[\s;&|)'"]|$)`

/** A shell program. */
export const SHELL = String.raw`(?:(?:ba|z|da|k|mk|a|c|tc|rba|ya)?sh|fish)`

/** An interpreter that runs a program read from stdin when given no arguments. */
export const INTERPRETER = String.raw`(?:python[\d.]{0,5}|pypy[\d.]{0,5}|perl|ruby|node|nodejs|php|lua|bun)`

/**
 * A shell or interpreter at the end of a pipeline that runs what it reads:
 * `| sh`, `| sudo bash -s -- -y`, `| python3 -` — not `| sh -c 'jq .'` or
 * `| bash script.sh`, which run something else.
 */
export const TO_SHELL = String.raw`(?:${SHELL}(?![^\s|])(?!(?: -[a-zA-Z]{1,8}){0,3} (?:-[a-zA-Z]{0,8}c(?:\s|$)|[^\s-]))|${INTERPRETER}(?: -)?$)`

/** Programs that send data over the network. */
export const NET = String.raw`(?:curl|wget|nc|ncat|netcat|socat|telnet|openssl s_client|ssh|scp|sftp|ftp|tftp|sendmail|mail|mailx|mutt|http|https|xh|nslookup|dig)`

/**
 * Files that hold credentials of the user or the machine (not the project):
 * SSH private keys and host keys, cloud CLI credentials, tokens of git, gh,
 * vault, terraform, Claude Code, GPG secret keys, browser password stores,
 * /etc/shadow, other processes' environment and memory, mounted secrets.
 */
export const SECRET_PATH = String.raw`(?:${HOME}/\.ssh/(?:id_[\w*?-]{1,64}|[\w-]{0,64}_key|identity)|${HOME}/\.ssh/?(?=[\s*;&|)'"]|$)|${HOME}/\.ssh/\*|/etc/ssh/ssh_host_[\w-]{1,32}_key|${HOME}/\.aws(?:/credentials)?/?(?=[\s;&|)'"]|$)|${HOME}/\.config/gcloud(?:/(?:credentials\.db|access_tokens\.db|application_default_credentials\.json|legacy_credentials\S{0,128}))?/?(?=[\s;&|)'"]|$)|${HOME}/\.azure/(?:accessTokens\.json|msal_token_cache\.\w{1,8})|${HOME}/\.(?:netrc|git-credentials|pgpass|vault-token|pypirc)|${HOME}/\.config/gh/hosts\.yml|${HOME}/\.claude/\.credentials\.json|${HOME}/\.terraform\.d/credentials\.tfrc\.json|${HOME}/\.gnupg(?:/(?:private-keys-v1\.d|secring\.gpg)\S{0,128})?/?(?=[\s;&|)'"]|$)|${HOME}/\.password-store|${HOME}/\.local/share/keyrings|${HOME}/\.mozilla/firefox/\S{1,128}/(?:logins\.json|key4\.db|cookies\.sqlite)|${HOME}/\.config/(?:google-chrome|chromium|BraveSoftware/Brave-Browser)/\S{1,128}/(?:Login Data|Cookies)|/etc/g?shadow-?|/etc/security/opasswd|/proc/(?:\d{1,10}|self|\*|\$\$|thread-self)/(?:environ|mem)|/(?:var/)?run/secrets(?:/\S{0,256})?)(?![\w.-])`

/** SECRET_PATH or a project file that holds secrets by its name (.env, keys, keystores, credentials). */
export const SECRETISH = String.raw`(?:${SECRET_PATH}|(?:[\w.~/-]{0,256}/)?\.env(?:\.[\w-]{1,32})?|[\w.~/-]{0,256}\.(?:pem|key|p12|pfx|jks|keystore|kdbx|ppk)|[\w.~/-]{0,256}credentials[\w.-]{0,32}|[\w.~/-]{0,256}secrets?\.(?:json|ya?ml|toml|env|txt)|(?:[\w.~/-]{0,256}/)?id_(?:rsa|dsa|ecdsa|ed25519)|(?:[\w.~/-]{0,256}/)?\.(?:npmrc|pypirc|netrc|git-credentials|pgpass)|${HOME}/\.kube/config|${HOME}/\.docker/config\.json)(?![\w.-])`

/** Cloud instance metadata endpoints (AWS, GCP, Azure, Alibaba, ECS task credentials) in the spellings clients accept. */
export const METADATA = String.raw`(?:169\.254\.169\.254|169\.254\.170\.2(?!\d)|\bmetadata\.google\.internal\b|\bmetadata\.goog\b|\bfd00:ec2::254\b|\b100\.100\.100\.200\b|\ba9fe:a9fe\b|\b2852039166\b|\b0xa9fea9fe\b|\b0251\.0376\.0251\.0376\b|\bAWS_CONTAINER_CREDENTIALS_(?:RELATIVE|FULL)_URI\b|\bECS_CONTAINER_METADATA_URI(?:_V4)?\b)`

/**
 * A command that writes the target: a redirection into it, an editor or
 * in-place tool on it, `tee`/`dd of=`/`truncate`, a permission change, or a
 * copy/move/link whose destination (last word) it is.
 */
export function writes(target: string): string {
  return String.raw`(?:(?:^| )[\d&]?>[>|]? ${target}|^(?:tee|truncate|dd|vi|vim|nvim|nano|emacs|ed|ex|chattr|chmod|chown|chgrp|setfacl|rm|unlink|shred)\b[^\n]{0,300}?(?: |of=)${target}|^(?:sed|perl|ruby)\b(?=[^\n]{0,100}? -[a-zA-Z]{0,8}i)[^\n]{0,300}? ${target}|^(?:cp|mv|ln|install|rsync|scp)\b[^\n]{0,300} ${target}$)${END}`
}

/** The clause start of an instruction in a prompt (see prompt-commands.ts). */
export const ASK = String.raw`(?:^|[.!?;:,\n][ \t]{0,4}|\b(?:and|then|now|also|just|please|pls|kindly|first|next|finally|go ahead and|can you|could you|would you|will you|i want you to|i need you to|you should|you must|you need to|make sure to|try to|feel free to|help me)\s{1,4})`
