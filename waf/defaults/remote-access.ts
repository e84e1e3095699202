import type { WafRule } from '../rule.ts'
import { END, INTERPRETER, SHELL, TO_SHELL, rule } from './fragments.ts'

/**
 * Reverse and bind shells (a shell whose input comes from the network) and
 * running code that was never on disk for anyone to read: a script downloaded
 * and piped into a shell, a base64 payload decoded into a shell.
 *
 * Piping a remote script into a shell is blocked even from a well-known host:
 * the agent would run unreviewed code with the session's rights, and the same
 * shape is how droppers work. Install tools in the runner image instead, or
 * download, read, then run (`curl -o install.sh …`, review, `sh install.sh`).
 * Operators who accept the risk can disable `exec.pipe-to-shell`.
 */
export const REMOTE_ACCESS_RULES: WafRule[] = [
  rule({
    id: 'rsh.dev-tcp',
    pattern: String.raw`/dev/(?:tcp|udp)/[^\s/]{1,255}/\d{1,5}(?=[^\n]{0,120}?(?:\b0>&\s?1\b|\b[12]?>&\s?0\b|<&\s?\d{1,3}\b|\|\s?(?:/bin/)?${SHELL}\b))|\b${SHELL}\s(?:-\w+\s){0,3}-i\b(?=[^\n]{0,200}?/dev/(?:tcp|udp)/)|>&\s?/dev/(?:tcp|udp)/`,
    category: 'reverse_shell',
    description: 'connects a shell’s input and output to a TCP/UDP socket (/dev/tcp): a reverse shell',
    applies_to: ['command_text'],
  }),
  rule({
    id: 'rsh.netcat-exec',
    pattern: String.raw`^(?:nc|ncat|netcat|nc\.traditional|nc\.openbsd|pwncat|cryptcat)\b[^\n]{0,300}? (?:-[a-zA-Z]{0,8}[ec]|--(?:sh-)?exec|--lua-exec)(?=[\s=]|$)`,
    flags: 'm',
    category: 'reverse_shell',
    description: 'netcat with -e/-c/--exec hands a program (a shell) to whoever is on the other end of the connection',
    applies_to: ['command'],
  }),
  rule({
    id: 'rsh.socat-exec',
    pattern: String.raw`^socat\b[^\n]{0,400}?\b(?:exec|system):`,
    flags: 'mi',
    category: 'reverse_shell',
    description: 'socat EXEC:/SYSTEM: attaches a program (a shell) to a network connection',
    applies_to: ['command'],
  }),
  rule({
    id: 'rsh.network-pipe-shell',
    pattern: String.raw`(?:^|\| )(?:nc|ncat|netcat|telnet|socat|openssl s_client|cryptcat)\b[^\n]{0,300}? \| (?:[^\n]{0,200}? \| )?${SHELL}${END}|(?:^|\| )${SHELL} -i\b[^\n]{0,200}? \| (?:nc|ncat|netcat|telnet|socat|openssl|cryptcat)\b`,
    flags: 'm',
    category: 'reverse_shell',
    description: 'pipes a network connection into a shell, or an interactive shell into a connection: a reverse shell',
    applies_to: ['command'],
  }),
  rule({
    id: 'rsh.fifo-relay',
    pattern: String.raw`\bmk(?:fifo|nod)\b[^\n]{0,200}?\b(?:nc|ncat|netcat|telnet|openssl\s+s_client|socat)\b`,
    category: 'reverse_shell',
    description: 'a named pipe relayed through netcat/telnet/openssl: the classic mkfifo reverse shell',
    applies_to: ['command_text'],
  }),
  rule({
    id: 'rsh.script-socket',
    pattern: String.raw`\bsocket\b(?=[\s\S]{0,400}?\b(?:connect|bind)\b)(?=[\s\S]{0,600}?(?:\bdup2\b|\bpty\.spawn\b|open\(\s?STDIN|\bos\.system\(|\bsubprocess\.(?:call|Popen|run)\(\s?\[?\s?["']/bin/|["']/bin/(?:ba|z)?sh(?:\s-i)?["']|\bexec\s?\(?\s?["']/bin/|\bos\.execute\b|\bio\.popen\b))|\bfsockopen\s?\((?=[\s\S]{0,300}?\b(?:exec|shell_exec|system|passthru|popen|proc_open)\s?\()|\bTCPSocket\b(?=[\s\S]{0,300}?\b(?:exec|system|spawn|popen)\b)|IO::Socket::INET\b(?=[\s\S]{0,300}?\b(?:system|exec|fdopen)\b)|/inet/tcp/\d{1,5}/|\bzsh/net/tcp\b|\bnet\.(?:Socket|connect|createConnection)\b(?=[\s\S]{0,600}?\b(?:spawn|exec)\s?\(\s?["'](?:/bin/)?(?:ba|z)?sh\b)|\b(?:spawn|exec)\s?\(\s?["'](?:/bin/)?(?:ba|z)?sh["'](?=[\s\S]{0,600}?\bnet\.(?:Socket|connect|createConnection)\b)`,
    category: 'reverse_shell',
    description: 'a Python/Perl/PHP/Ruby/Node/Lua/awk one-liner that connects a socket to a shell: a reverse or bind shell',
    applies_to: ['command_text'],
  }),
  rule({
    id: 'exec.pipe-to-shell',
    pattern: String.raw`^(?:curl|wget|fetch|http|https|xh|aria2c|lynx|links|w3m)\b[^\n]{0,400}? \| (?:[^\n]{0,200}? \| )?${TO_SHELL}`,
    flags: 'm',
    category: 'remote_code_execution',
    description:
      'pipes a downloaded script straight into a shell or interpreter: unreviewed remote code runs with the session’s rights (download, read, then run it instead)',
    applies_to: ['command'],
  }),
  rule({
    id: 'exec.substitute-remote',
    pattern: String.raw`^(?:${SHELL}|eval|source|\.|${INTERPRETER})(?= )[^\n]{0,300}?(?:\$\(|<\()(?:curl|wget|fetch|http|xh)\b`,
    flags: 'm',
    category: 'remote_code_execution',
    description: 'runs a downloaded script through $(curl …) or <(curl …): unreviewed remote code runs with the session’s rights',
    applies_to: ['command'],
  }),
  rule({
    id: 'exec.decoded-to-shell',
    pattern: String.raw`(?:^|\| )(?:base(?:64|32)|basenc|xxd|openssl|rev|uudecode)\b[^\n]{0,200}? \| (?:[^\n]{0,200}? \| )?${TO_SHELL}|^(?:${SHELL}|eval|source|\.|${INTERPRETER})(?= )[^\n]{0,300}?(?:\$\(|<\()[^\n]{0,300}?\b(?:base(?:64|32)|basenc)(?: \S{1,16}){0,3} (?:-d|--decode|-D)${END}`,
    flags: 'm',
    category: 'remote_code_execution',
    description: 'decodes an obfuscated payload (base64, hex, reversed) straight into a shell: hiding what runs is itself the danger',
    applies_to: ['command'],
  }),
  rule({
    id: 'exec.decoded-eval',
    pattern: String.raw`\b(?:exec|eval)\s?\(\s?(?:base64\.b64decode|__import__\(\s?["']base64["']\)|decode_base64|base64_decode|atob|Buffer\.from\(|codecs\.decode|bytes\.fromhex|zlib\.decompress|gzinflate|str_rot13)`,
    category: 'remote_code_execution',
    description: 'an interpreter one-liner that evaluates a decoded payload: hiding what runs is itself the danger',
    applies_to: ['command_text'],
  }),
]
