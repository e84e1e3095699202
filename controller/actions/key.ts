import type { Action } from '../reconcile/view.ts'

/** The actions sent once however often a pass plans them: a session's failure or release on one pod. */
export type KeyedAction = Extract<Action, { kind: 'fail' | 'release' }>

/** Names a keyed action by what it says: the same report planned again has the same key. */
export type ActionKey = `${KeyedAction['kind']}:${string}:${string}`

/** The key of a session's failure or release on one pod. */
export function actionKey(action: KeyedAction): ActionKey {
  return `${action.kind}:${action.sessionId}:${action.pod}`
}
