import { describe, expect, it } from 'vitest'
import { ServiceError, type Command, type CommandOf, type ReplyOf } from '../../../contract/mod.ts'
import type { Runners } from '../../../gateway/runners.ts'
import type { SessionHub, TurnStart } from '../../../gateway/session-hub.ts'
import { handOffTurn } from '../../../gateway/turns/hand-off.ts'

const execute: CommandOf<'execute'> = { type: 'execute', session_id: 's1', turn_id: 'turn_1', prompt: 'hi' }

/** A hub that records what it hears of each turn, and runners that answer (or refuse) the execute. */
function parts(answer: () => Promise<ReplyOf<'execute'>>) {
  const heard: string[] = []
  const hub = {
    startTurn(sessionId: string, turnId: string): TurnStart {
      heard.push(`start ${sessionId} ${turnId}`)
      return { accepted: (afterSeq) => heard.push(`accepted ${afterSeq}`), refused: () => heard.push('refused') }
    },
  } as unknown as SessionHub
  const runners: Pick<Runners, 'send'> = {
    send: async <C extends Command>(command: C) => {
      heard.push(`send ${command.type}`)
      return (await answer()) as ReplyOf<C['type']>
    },
  }
  return { hub, runners, heard }
}

describe('turns - the hand-off of a turn', () => {
  it("hand-off - the hub learns of the turn before it is sent, then of the runner's after_seq", async () => {
    const { hub, runners, heard } = parts(async () => ({ turn_id: 'turn_1', queued: 0, after_seq: 7 }))
    expect(await handOffTurn({ hub, runners }, execute)).toEqual({ turn_id: 'turn_1', queued: 0, after_seq: 7 })
    expect(heard).toEqual(['start s1 turn_1', 'send execute', 'accepted 7'])
  })

  it('hand-off - a refused turn is refused to the hub too, and the error reaches the surface', async () => {
    const { hub, runners, heard } = parts(async () => {
      throw new ServiceError('OVERLOADED', 'full')
    })
    await expect(handOffTurn({ hub, runners }, execute)).rejects.toMatchObject({ code: 'OVERLOADED' })
    expect(heard).toEqual(['start s1 turn_1', 'send execute', 'refused'])
  })
})
