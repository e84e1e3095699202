import type { EngineStartOptions } from './engine.ts'

/**
 * How a turn's instructions reach the CLI. A conversation starts with a system
 * prompt (the instructions of its first turn) where the CLI takes one; a CLI
 * fixes it when it starts, so a later turn that asks for other instructions
 * carries them in front of its prompt, and the conversation has those from then on.
 */

/** The prompt with `instructions` in front of it, as the model reads instructions that came with a turn. */
export function withInstructions(prompt: string, instructions: string): string {
  return `<instructions>\n${instructions}\n</instructions>\n\n${prompt}`
}

/** The system prompt to start the CLI's conversation with: none when it resumes one, which has its own already. */
export function startInstructions(options: Pick<EngineStartOptions, 'resume' | 'instructions'>): string | undefined {
  return options.resume ? undefined : options.instructions
}

/** The text each turn of one CLI process sends, given the instructions its conversation has. */
export class TurnPrompts {
  #instructions: string | undefined

  /** `instructions`: what the conversation has now (none: no system prompt, or a CLI that cannot take one). */
  constructor(instructions: string | undefined) {
    this.#instructions = instructions
  }

  /** The turn's text: its prompt, behind its instructions when they differ from the conversation's. */
  text(prompt: string, instructions: string | undefined): string {
    if (instructions === undefined || instructions === this.#instructions) return prompt
    this.#instructions = instructions
    return withInstructions(prompt, instructions)
  }
}
