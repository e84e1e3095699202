// @ts-check
/**
 * Codex's PreToolUse hook: asks the runner's tool gate (a Unix socket, argv[2])
 * about the tool call Codex describes on stdin, and answers as Codex reads a
 * hook: exit 0 without output = allow; exit 2 with the reason on stderr = block.
 * Fail-closed: no answer within argv[3] seconds, a refused connection or an
 * unreadable answer also block the call (a hook that crashed would let it run).
 * Plain JavaScript with node builtins only (no type stripping at each tool call).
 */
import { connect } from 'node:net'

const [socketPath = '', timeoutSeconds = '30'] = process.argv.slice(2)
/** @param {string} reason */
const block = (reason) => {
  process.stderr.write(`${reason}\n`)
  process.exit(2)
}
setTimeout(() => block('the runtime did not decide about this tool call in time; it was not run'), Number(timeoutSeconds) * 1000).unref()

/** @type {Buffer[]} */
const chunks = []
process.stdin.on('data', (chunk) => chunks.push(chunk))
process.stdin.on('end', () => {
  const socket = connect(socketPath)
  /** @type {Buffer[]} */
  const answer = []
  socket.on('error', (err) => block(`the runtime's tool gate cannot be reached (${err.message}); the tool call was not run`))
  socket.on('data', (chunk) => answer.push(chunk))
  socket.on('end', () => {
    let decision
    try {
      decision = JSON.parse(Buffer.concat(answer).toString('utf8'))
    } catch {
      block("the runtime's tool gate gave no readable answer; the tool call was not run")
    }
    if (decision?.decision === 'allow') process.exit(0)
    block(typeof decision?.reason === 'string' ? decision.reason : 'denied by the runtime')
  })
  socket.end(Buffer.concat(chunks))
})
