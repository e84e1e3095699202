// @ts-check
/**
 * An OpenCode plugin (loaded by the OpenCode CLI, in its own Bun runtime)
 * that asks the runner about every tool call before it runs, over the file
 * descriptor named by AGENT_RUNTIME_GATE_FD (a socket the runner passed in;
 * one JSON object a line, protocol in gate-channel.ts). It says `ready` once
 * loaded (the runner sends the prompt only then), asks `check` in
 * `tool.execute.before` (holding the call as long as the runner takes: with
 * approval: ask, a person answers; OpenCode puts no time limit on the hook),
 * and throws the runner's reason on anything but an allow: OpenCode then
 * marks the tool call failed with that reason, which is what the model reads.
 * A closed or broken channel denies every call.
 */
import fs from 'node:fs'

export const AgentRuntimeToolGate = async () => {
  const fd = Number(process.env.AGENT_RUNTIME_GATE_FD)
  /** @type {Map<number, (answer: {allow?: boolean, reason?: string}) => void>} */
  const waiting = new Map()
  let broken = Number.isInteger(fd) ? undefined : 'the runner gave no tool gate channel'
  /** @param {string} why */
  const fail = (why) => {
    broken ??= why
    for (const answer of waiting.values()) answer({ allow: false, reason: broken })
    waiting.clear()
  }
  /** @param {object} message */
  const send = (message) => fs.writeSync(fd, `${JSON.stringify(message)}\n`)

  if (broken === undefined) {
    let buffered = ''
    const input = fs.createReadStream('', { fd, encoding: 'utf8', autoClose: false })
    input.on('data', (chunk) => {
      buffered += chunk
      for (let end = buffered.indexOf('\n'); end >= 0; end = buffered.indexOf('\n')) {
        const line = buffered.slice(0, end)
        buffered = buffered.slice(end + 1)
        let answer
        try {
          answer = JSON.parse(line)
        } catch {
          continue
        }
        waiting.get(answer.id)?.(answer)
        waiting.delete(answer.id)
      }
    })
    input.on('error', (err) => fail(`the tool gate channel failed (${err.message})`))
    input.on('end', () => fail('the tool gate channel closed'))
    try {
      send({ type: 'ready' })
    } catch (err) {
      fail(`the tool gate channel failed (${messageOf(err)})`)
    }
  }

  let nextId = 0
  return {
    /**
     * @param {{tool: string, callID: string}} input
     * @param {{args: unknown}} output
     */
    'tool.execute.before': async (input, output) => {
      if (broken !== undefined) throw new Error(`Tool call blocked: ${broken}`)
      const id = ++nextId
      /** @type {{allow?: boolean, reason?: string}} */
      const answer = await new Promise((resolve) => {
        waiting.set(id, resolve)
        try {
          send({ type: 'check', id, tool: input.tool, callID: input.callID, args: output.args })
        } catch (err) {
          fail(`the tool gate channel failed (${messageOf(err)})`)
        }
      })
      if (answer.allow !== true) throw new Error(answer.reason ?? 'Tool call blocked by the runtime')
    },
  }
}

/** @param {unknown} err */
const messageOf = (err) => (err instanceof Error ? err.message : String(err))
