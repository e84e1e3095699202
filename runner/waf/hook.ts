/**
 * The WAF's PreToolUse hook for Claude Code. The runner hands it to the CLI
 * with `--settings` (runner/engine/claude/settings.ts); the CLI runs it before
 * every tool call with the call as JSON on stdin. It asks the runner over the
 * unix socket named by AGENT_RUNTIME_WAF_SOCKET, for the session named by the
 * process tag AGENT_RUNTIME_SESSION_TAG, and prints the deny decision with the
 * WAF's reason, which the agent reads in its tool_result.
 *
 * Fails closed: unreadable input, a missing variable, an unreachable runner, a
 * bad or late answer, a crash — each is a deny that says why. Only node:
 * builtins and two dependency-free modules are loaded, so it starts fast.
 */
import net from 'node:net'
import { SESSION_TAG_VAR } from '../process/env.ts'
import { denyOutput, HOOK_ANSWER_TIMEOUT_MS, HOOK_MAX_INPUT_BYTES, HOOK_TIMEOUT_VAR, parseReply, toolCallOf, WAF_SOCKET_VAR, type HookReply } from './hook-protocol.ts'

let finished = false
let socket: net.Socket | undefined

const answerTimeoutMs = Number(process.env[HOOK_TIMEOUT_VAR]) || HOOK_ANSWER_TIMEOUT_MS
const deadline = setTimeout(() => unchecked(`the runner did not answer within ${answerTimeoutMs} ms`), answerTimeoutMs)

function finish(reply: HookReply): void {
  if (finished) return
  finished = true
  clearTimeout(deadline)
  socket?.destroy()
  if (reply.decision === 'allow') process.exit(0)
  process.stdout.write(denyOutput(reply.reason), () => process.exit(0))
}

function unchecked(why: string): void {
  finish({ decision: 'deny', reason: `The agent runtime's WAF could not check this tool call, so it was not run: ${why}` })
}

process.on('uncaughtException', (err) => unchecked(`the WAF hook failed (${err.message})`))

function ask(socketPath: string, line: string): void {
  let answer = ''
  socket = net.createConnection(socketPath)
  socket.setEncoding('utf8')
  socket.on('connect', () => socket?.write(line))
  socket.on('data', (chunk: string) => {
    answer += chunk
    const end = answer.indexOf('\n')
    if (end < 0) return
    const reply = parseReply(answer.slice(0, end))
    if (reply) finish(reply)
    else unchecked('the runner sent an answer the hook does not understand')
  })
  socket.on('error', (err) => unchecked(`the runner is not reachable at ${socketPath} (${(err as NodeJS.ErrnoException).code ?? err.message})`))
  socket.on('close', () => unchecked('the runner closed the connection without an answer'))
}

function onInput(raw: string): void {
  let input: unknown
  try {
    input = JSON.parse(raw)
  } catch {
    return unchecked('the hook input from the CLI is not JSON')
  }
  const call = toolCallOf(input)
  if (!call) return unchecked('the hook input from the CLI names no tool')
  const socketPath = process.env[WAF_SOCKET_VAR]
  const tag = process.env[SESSION_TAG_VAR]
  if (!socketPath || !tag) return unchecked(`${WAF_SOCKET_VAR} or ${SESSION_TAG_VAR} is not set in the CLI's environment`)
  ask(socketPath, JSON.stringify({ tag, ...call }) + '\n')
}

const chunks: Buffer[] = []
let bytes = 0
process.stdin.on('data', (chunk: Buffer) => {
  bytes += chunk.length
  if (bytes > HOOK_MAX_INPUT_BYTES) unchecked(`the tool call is larger than ${HOOK_MAX_INPUT_BYTES} bytes`)
  else chunks.push(chunk)
})
process.stdin.on('end', () => {
  if (!finished) onInput(Buffer.concat(chunks).toString('utf8'))
})
process.stdin.on('error', (err) => unchecked(`cannot read the hook input (${err.message})`))
