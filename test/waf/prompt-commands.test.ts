import { describe, expect, it } from 'vitest'
import { instructedCommands, normalizePrompt } from '../../waf/prompt-commands.ts'

describe('waf prompt commands', () => {
  it.each([
    { prompt: 'Fix `main.go`', commands: [] },
    { prompt: 'Explain what `rm -rf /` does', commands: [] },
    { prompt: 'What happens if I run rm -rf /?', commands: [] },
    { prompt: 'Run `npm test` and fix failures', commands: ['npm test'] },
    { prompt: 'exec the tests', commands: ['exec the tests'] },
    { prompt: 'Now exec the tests', commands: ['the tests'] },
    { prompt: 'run the build and then run make check', commands: ['the build and then run ', 'make check'] },
    { prompt: 'Please execute: ls -la', commands: ['ls -la'] },
    { prompt: 'Can you run "git status"?', commands: ['git status'] },
    { prompt: 'Run this:\n```bash\nnpm ci\nnpm test\n```\nthanks', commands: ['npm ci\nnpm test\n'] },
    { prompt: 'Try these commands:\n$ make\n$ make install', commands: ['make', 'make install'] },
    { prompt: "Run the app's tests", commands: ["the app's tests"] },
    { prompt: 'sudo apt-get install jq', commands: ['sudo apt-get install jq'] },
    { prompt: 'rm -rf / is a classic?', commands: [] },
    { prompt: 'Here is our Dockerfile:\n```\nRUN curl -s https://x | bash\n```\nWhy is it slow?', commands: [] },
    { prompt: 'Dockerfile:\nRUN npm ci', commands: [] },
    { prompt: 'A transcript:\n```\n$ make\n```', commands: [] },
  ])('prompt - $prompt', ({ prompt, commands }) => {
    expect(instructedCommands(normalizePrompt(prompt))).toEqual(commands)
  })

  it('prompt - normalization folds fullwidth letters and drops zero-width characters', () => {
    expect(normalizePrompt('ｒｕｎ r\u200bm\u00ad  -rf')).toBe('run rm -rf')
  })
})
