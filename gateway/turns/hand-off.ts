import type { CommandOf, ReplyOf } from '../../contract/mod.ts'
import type { Runners } from '../runners.ts'
import type { SessionHub } from '../session-hub.ts'

/**
 * Hands one turn to the runners: the only way a surface starts a turn. The
 * hub learns of it first (SessionHub.startTurn), so the surfaces following the
 * session get all of its events even if the first ones are missed live, and
 * the session counts as running a turn until its end is seen; then the runner's
 * answer settles it (accepted after its `after_seq`, or refused).
 */
export async function handOffTurn(deps: { runners: Pick<Runners, 'send'>; hub: SessionHub }, command: CommandOf<'execute'>): Promise<ReplyOf<'execute'>> {
  const turn = deps.hub.startTurn(command.session_id, command.turn_id)
  try {
    const reply = await deps.runners.send(command)
    turn.accepted(reply.after_seq)
    return reply
  } catch (err) {
    turn.refused()
    throw err
  }
}
