import { describe, expect, it } from 'vitest'
import { commandViews, normalizeText } from '../../../waf/shell/views.ts'

describe('waf shell views', () => {
  it.each([
    { name: 'words one space apart, quotes removed', command: `git  commit -m "fix: a | b"`, parsed: ['git commit -m fix: a ¦ b'] },
    { name: 'redirections read "op target"', command: 'echo hi >/tmp/x 2>&1', parsed: ['echo hi > /tmp/x 2>& 1'] },
    { name: 'a list gives one line per command', command: 'a && b; c || d', parsed: ['a', 'b', 'c', 'd'] },
    { name: 'a pipeline adds a joined line', command: 'ps aux | grep node', parsed: ['ps aux', 'grep node', 'ps aux | grep node'] },
    { name: 'wrappers are stripped on a second line', command: 'sudo -u root nice -n 5 ls -la', parsed: ['sudo -u root nice -n 5 ls -la', 'ls -la'] },
    { name: 'a wrapper alone stays', command: 'sudo -i', parsed: ['sudo -i'] },
    { name: 'command -v is a lookup, not a run', command: 'command -v shutdown', parsed: ['command -v shutdown'] },
    { name: 'the program path is reduced to its name', command: '/usr/bin/env python3 x.py', parsed: ['/usr/bin/env python3 x.py', 'python3 x.py'] },
    { name: 'assignments feed variables', command: 'D=/tmp/x; rm -rf $D', parsed: ['D=/tmp/x', 'rm -rf /tmp/x'] },
    { name: '$HOME reads ~', command: 'ls "$HOME/.cache" ${HOME}/x', parsed: ['ls ~/.cache ~/x'] },
    { name: 'substitutions run first, shown normalised', command: 'echo "$(date  +%F)"', parsed: ['date +%F', 'echo $(date +%F)'] },
    { name: 'sh -c is unwrapped', command: `bash -c 'ls; pwd'`, parsed: ['bash -c ls; pwd', 'ls', 'pwd'] },
    { name: 'a data here-document is not parsed', command: "cat > f <<'EOF'\nrm -rf /\nEOF\nls", parsed: ['cat > f << EOF', 'ls'] },
    { name: 'a shell here-document is parsed', command: 'bash <<EOF\nls /\nEOF', parsed: ['bash << EOF', 'ls /'] },
    {
      name: 'an interpreter here-document joins its line',
      command: "python3 - <<'EOF'\nprint(1)\nEOF",
      parsed: ['python3 - << EOF', 'python3 - << EOF print(1) '],
    },
    {
      name: 'base64 into a shell is decoded',
      command: 'echo bHMgLwo= | base64 -d | sh',
      parsed: ['echo bHMgLwo=', 'base64 -d', 'sh', 'ls /', 'echo bHMgLwo= | base64 -d | sh'],
    },
    { name: 'cd to an absolute directory resolves later arguments', command: 'cd /srv && ls app', parsed: ['cd /srv', 'ls app', 'ls /srv/app'] },
    { name: 'comments are dropped', command: 'ls # rm -rf /', parsed: ['ls'] },
    { name: 'unbalanced quotes run to the end', command: `echo 'oops; rm -rf /`, parsed: ['echo oops; rm -rf /'] },
  ])('views - $name', ({ command, parsed }) => {
    expect(commandViews(command).parsed.split('\n')).toEqual(parsed)
  })

  it('views - the text view drops data here-documents and keeps decoded payloads', () => {
    const v = commandViews("cat > a.txt <<'EOF'\nsecret stuff\nEOF\necho bHMgLwo= | base64 -d | sh")
    expect(v.text).not.toContain('secret stuff')
    expect(v.text.split('\n')).toContain('ls /')
  })

  it('views - urls are collected, scheme or not, for fetchers', () => {
    expect(commandViews('curl -s https://a.example/x && wget 169.254.169.254/latest && echo 10.0.0.1').urls).toEqual([
      'https://a.example/x',
      'http://169.254.169.254/latest',
    ])
  })

  it('views - a nesting deeper than the parser follows is reported', () => {
    expect(commandViews(`${'$('.repeat(20)}x${')'.repeat(20)}`).tooComplex).toBe(true)
    expect(commandViews('echo $(echo $(echo x))').tooComplex).toBe(false)
  })

  it.each([
    { text: 'a \\\n b', out: 'a b' },
    { text: 'rm$IFS-rf${IFS}/', out: 'rm -rf /' },
    { text: `r''m "" x`, out: `rm "" x` },
    { text: ' a \t  b ', out: 'a b' },
  ])('text - normalizeText($text)', ({ text, out }) => {
    expect(normalizeText(text)).toBe(out)
  })
})
