/**
 * What every fake model API in test/fakes answers, whatever its wire format
 * (Anthropic Messages, OpenAI Responses and Chat Completions, Gemini): one
 * scripted step, decided from the conversation the CLI sent. Each fake reads
 * its own request format into a `ScriptInput` and writes the `ScriptStep` in
 * its own stream format, so one prompt does the same thing in every engine
 * (the engine conformance suite relies on that).
 *
 * - tool results after the last prompt → `Done. The tool said: <results>`
 * - `run: CMD` → thinking, text and a shell tool call of CMD
 * - `run-b64: BASE64` → the same with the decoded command (a command the model
 *   writes by itself: the prompt does not spell it)
 * - `recall` → `Earlier prompts: a | b` (the prompts before this one)
 * - `slow: MS` → wait MS, then `slow done`
 * - anything else → `Echo: <prompt>`
 */

/** The conversation as the fake read it from one request. */
export interface ScriptInput {
  /** The user's own prompts, oldest first (context the CLI adds, such as environment blocks, left out). */
  prompts: string[]
  /** Tool outputs sent after the last prompt, in order; empty when the last message is the prompt. */
  toolResults: string[]
}

/** One model step to stream. */
export interface ScriptStep {
  thinking?: string
  text: string
  /** A shell command the model asks to run; the step ends with that tool call. */
  toolCommand?: string
  /** Wait this long (ms) before streaming the step. */
  delayMs?: number
}

export const RUN_THINKING = 'The user wants me to run a command. I will use the shell.'
export const RUN_TEXT = 'Let me run a command.'

export function scriptStep(input: ScriptInput): ScriptStep {
  if (input.toolResults.length > 0) return { text: `Done. The tool said: ${input.toolResults.join('\n')}` }
  const prompt = input.prompts.at(-1) ?? ''
  const encoded = /run-b64: (\S+)/.exec(prompt)
  const run = /run: (.*)$/m.exec(prompt)
  if (encoded || run) {
    const toolCommand = encoded ? Buffer.from(encoded[1] ?? '', 'base64').toString('utf8') : (run?.[1] ?? '').trim()
    return { thinking: RUN_THINKING, text: RUN_TEXT, toolCommand }
  }
  if (prompt.includes('recall')) {
    const earlier = input.prompts.slice(0, -1)
    return { text: `Earlier prompts: ${earlier.length > 0 ? earlier.join(' | ') : '(none)'}` }
  }
  const slow = /slow: (\d+)/.exec(prompt)
  if (slow) return { text: 'slow done', delayMs: Number(slow[1]) }
  return { text: `Echo: ${prompt}` }
}

/** Splits text into small pieces so that answers stream as several deltas. */
export function textPieces(text: string, size = 12): string[] {
  const out: string[] = []
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size))
  return out.length > 0 ? out : ['']
}

/** A rough token count, about four characters a token as for English text. */
export function roughTokens(chars: number): number {
  return Math.max(1, Math.ceil(chars / 4))
}
