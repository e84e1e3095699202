import type { WafRule } from '../rule.ts'
import { END, HOME, METADATA, NET, SECRET_PATH, SECRETISH, rule } from './fragments.ts'

/**
 * Credential theft and exfiltration. The project's own files are the agent's
 * work — reading `.env` to debug a config is fine, so is using a key
 * (`ssh -i ~/.ssh/id_deploy`, `chmod 600`). What is blocked: reading the
 * user's or the machine's secrets (SSH private keys, cloud credentials,
 * /etc/shadow, other processes' environment, mounted secrets), asking the
 * cloud metadata service for the machine's credentials, and sending secrets
 * or the environment over the network or to anonymous drop sites.
 */

/** Anonymous paste / file-drop / request-capture services. */
const DROP_HOST = String.raw`\b(?:pastebin\.com|paste\.ee|hastebin\.com|termbin\.com|transfer\.sh|0x0\.st|file\.io|ix\.io|sprunge\.us|dpaste\.(?:com|org)|paste\.rs|bashupload\.com|temp\.sh|oshi\.at|filebin\.net|catbox\.moe|gofile\.io|anonfiles\.com|webhook\.site|requestbin\.(?:com|net)|pipedream\.net|beeceptor\.com|hookbin\.com|interact\.sh|oast\.(?:pro|live|site|online|fun|me)|burpcollaborator\.net|ptpb\.pw|clbin\.com|pastes\.io|rentry\.co)\b`

/** Programs that only use, list or fix the permissions of a key, never print it. */
const KEY_USERS = String.raw`(?:cd|pushd|ssh|ssh-add|ssh-keygen|ssh-copy-id|ls|stat|test|\[|\[\[|file|touch|mkdir|chmod|chown|du|wc|realpath|readlink|dirname|basename|which)`

export const CREDENTIAL_RULES: WafRule[] = [
  rule({
    id: 'cred.secret-file',
    pattern: String.raw`^(?!${KEY_USERS}${END})[^\n]{0,400}?(?<![\w.~/$-])(?<!-i )(?<!IdentityFile=)${SECRET_PATH}`,
    flags: 'm',
    category: 'credential_theft',
    description:
      'reads, copies or sends a credential of the user or the machine (SSH private key, cloud credentials, /etc/shadow, another process’s environment, mounted secrets)',
    applies_to: ['command'],
  }),
  rule({
    id: 'cred.secret-path',
    pattern: String.raw`^${SECRET_PATH}`,
    category: 'credential_theft',
    description:
      'a tool reads a credential of the user or the machine (SSH private key, cloud credentials, /etc/shadow, another process’s environment, mounted secrets)',
    applies_to: ['read_path'],
  }),
  rule({
    id: 'cred.token-files',
    pattern: String.raw`(?:^|[\s=@'"])${HOME}/\.(?:kube/config|docker/config\.json|npmrc|yarnrc(?:\.yml)?|config/hub|bash_history|zsh_history|python_history|psql_history|mysql_history)${END}`,
    flags: 'm',
    level: 'warn',
    category: 'credential_theft',
    description: 'reads a user file that often holds tokens (kubeconfig, docker or npm auth, shell history)',
    applies_to: ['command', 'read_path'],
  }),
  rule({
    id: 'cred.dump-tools',
    pattern: String.raw`^(?:getent (?:g?shadow)|unshadow|mimikatz|lazagne|secretsdump(?:\.py)?|gpg\b[^\n]{0,100}? --export-secret-(?:keys|subkeys)|security (?:dump-keychain|find-(?:generic|internet)-password\b[^\n]{0,100}? -[a-z]{0,4}w)|aws configure (?:get [\w.]{0,40}(?:secret|session_token)|export-credentials))${END}`,
    flags: 'm',
    category: 'credential_theft',
    description: 'dumps password hashes, secret keys or stored credentials',
    applies_to: ['command'],
  }),
  rule({
    id: 'cred.hunt-keys',
    pattern: String.raw`^(?:grep|egrep|rg|ag|ack)\b[^\n]{0,200}?(?:PRIVATE KEY|aws_secret_access_key|AKIA)[^\n]{0,300}? (?:/|~|/home|/root)/?${END}|^find (?:/|~|/home|/root)/? [^\n]{0,200}?-i?name (?:id_\S{0,32}|\S{0,16}\.pem|\S{0,16}\.key|credentials|\.env|\S{0,16}\.kdbx|\.netrc|\S{0,16}\.ppk)${END}`,
    flags: 'm',
    level: 'warn',
    category: 'credential_theft',
    description: 'searches the whole machine or home directory for private keys or credentials',
    applies_to: ['command'],
  }),
  rule({
    id: 'cred.helper-dump',
    pattern: String.raw`^(?:git credential(?:-store|-cache)? (?:fill|get)|docker-credential-[\w-]{1,32} (?:get|list)|secret-tool (?:lookup|search)|gnome-keyring-dump|kwallet-query\b[^\n]{0,100}? (?:-r|--read-password)|aws ecr get-login-password|gh auth token|vault (?:read|kv get)\b[^\n]{0,200}? (?:-field[ =])?(?:secret|token|password))${END}`,
    flags: 'm',
    category: 'credential_theft',
    description: 'prints a stored credential from a credential helper or keyring (git, docker, the desktop keyring, gh)',
    applies_to: ['command'],
  }),
  rule({
    id: 'cred.print-tokens',
    pattern: String.raw`^(?:kubectl config view\b[^\n]{0,100}? --raw|gcloud auth (?:application-default )?print-(?:access|identity)-token|az account get-access-token|npm token list|doctl auth token)${END}`,
    flags: 'm',
    level: 'warn',
    category: 'credential_theft',
    description: 'prints a cloud, cluster or registry token; allowed (calling an API with it is work) but reported',
    applies_to: ['command'],
  }),
  rule({
    id: 'cred.cloud-metadata',
    pattern: METADATA,
    flags: 'i',
    category: 'credential_theft',
    description: 'contacts the cloud instance metadata service, which hands out the machine’s cloud credentials',
    applies_to: ['command_text', 'url'],
  }),
  rule({
    id: 'exfil.environment',
    pattern: String.raw`^(?:env|printenv|set|export(?: -p)?|declare -x|compgen -e)(?: [^\n|]{0,100})? \|(?: [^\n]{0,200}? \|)? ${NET}\b`,
    flags: 'm',
    category: 'exfiltration',
    description: 'sends the environment (API keys, tokens) over the network',
    applies_to: ['command'],
  }),
  rule({
    id: 'exfil.pipe-secret',
    pattern: String.raw`^(?:cat|tac|head|tail|base64|base32|xxd|od|gzip|bzip2|xz|zstd|tar|zip|gpg|sed|awk|grep|strings|jq|yq|sort|cut)\b[^\n|]{0,200}? (?:< )?${SECRETISH}[^\n|]{0,200}? \|(?: [^\n]{0,200}? \|)? ${NET}\b`,
    flags: 'm',
    category: 'exfiltration',
    description: 'pipes a secrets file (.env, keys, credentials) into a network client',
    applies_to: ['command'],
  }),
  rule({
    id: 'exfil.upload-secret',
    pattern: String.raw`^(?:curl|wget|http|https|xh)\b[^\n]{0,400}?(?:@|--post-file=|--body-file=|--upload-file |-T |file://)(?:< )?${SECRETISH}`,
    flags: 'm',
    category: 'exfiltration',
    description: 'uploads a secrets file (.env, keys, credentials) with curl/wget',
    applies_to: ['command'],
  }),
  rule({
    id: 'exfil.substitute-secret',
    pattern: String.raw`^${NET}\b[^\n]{0,400}?\$\((?:env|printenv|set|(?:cat|base64|head|tail|xxd|gzip|tar)[^)\n]{0,200}? ${SECRETISH})`,
    flags: 'm',
    category: 'exfiltration',
    description: 'sends the environment or a secrets file inline ($(env), $(cat .env)) over the network',
    applies_to: ['command'],
  }),
  rule({
    id: 'exfil.drop-site',
    pattern: String.raw`^(?:curl|wget|http|https|xh)\b(?=[^\n]{0,400}? (?:-[a-zA-Z]{0,8}[dFT]|--(?:data[\w-]{0,8}|form|upload-file|post-data|post-file|body-data|body-file)|-X ?(?:POST|PUT)|--request ?(?:POST|PUT))(?=[\s=]|$))[^\n]{0,400}?${DROP_HOST}|^(?:nc|ncat|netcat|socat|telnet)\b[^\n]{0,200}?${DROP_HOST}`,
    flags: 'mi',
    category: 'exfiltration',
    description: 'uploads data to an anonymous paste, file-drop or request-capture service',
    applies_to: ['command'],
  }),
  rule({
    id: 'exfil.dns',
    pattern: String.raw`^(?:dig|nslookup|host|drill)\b[^\n]{0,200}?\$\((?:cat|env|printenv|whoami|id|base64|head|xxd)\b`,
    flags: 'm',
    category: 'exfiltration',
    description: 'encodes command output into a DNS lookup: DNS exfiltration',
    applies_to: ['command'],
  }),
  rule({
    id: 'exfil.gist-secret',
    pattern: String.raw`^gh gist create\b[^\n]{0,200}? ${SECRETISH}`,
    flags: 'm',
    category: 'exfiltration',
    description: 'publishes a secrets file as a gist',
    applies_to: ['command'],
  }),
]
