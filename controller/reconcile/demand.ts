import { isLive, type Action, type Plan, type World } from './view.ts'
import { isWarm } from './warm-pool.ts'

/**
 * Cold pods. A session whose placement found no warm runner asks for a pod
 * of its own: it is answered with a pod already made for it, or a new one
 * (within max_pods). A cold pod nobody claimed within claim_timeout of being
 * ready, or whose session another runner took, becomes a warm pod.
 *
 * With per-session credentials the controller places the session itself: on
 * the cold pod made for it or on a ready warm pod (`place`), and answers once
 * the pod serves it (controller.ts); a session whose runner is alive is
 * answered with that pod.
 */
export function reconcileDemands(world: World, doomed: ReadonlySet<string>, capacity: number): Plan & { created: number } {
  const actions: Action[] = []
  const wakeAt: number[] = []
  let created = 0
  /** Pods given a session in this pass (per-session credentials). */
  const placing = new Set<string>()
  for (const sessionId of world.demands) {
    const owner = world.sessions.get(sessionId)?.owner
    if (world.placesSessions) {
      if (owner !== undefined) {
        // Its runner serves it: the gateway sends there. An owner pod that is gone is released
        // first (lost.ts); the demand waits for that.
        if (world.pods.some((p) => p.name === owner && isLive(p)))
          actions.push({ kind: 'answer', sessionId, answer: { ok: true, pod: owner, created: false, assigned: true } })
        continue
      }
      const usable = (p: (typeof world.pods)[number]) =>
        isLive(p) && p.ready && !doomed.has(p.name) && !placing.has(p.name) && !world.unplaceable.has(p.name) && !p.changing
      const target =
        world.pods.find((p) => usable(p) && p.state === 'cold' && p.demandFor === sessionId) ?? world.pods.find((p) => usable(p) && isWarm(p, world))
      if (target !== undefined) {
        placing.add(target.name)
        actions.push({ kind: 'place', pod: target.name, resourceVersion: target.resourceVersion, sessionId })
        continue
      }
    }
    if (owner !== undefined) {
      actions.push({ kind: 'answer', sessionId, answer: { ok: true, pod: owner, created: false } })
      continue
    }
    const made =
      world.pods.find((p) => isLive(p) && !doomed.has(p.name) && p.demandFor === sessionId)?.name ??
      world.inflight.find((p) => p.purpose.kind === 'cold' && p.purpose.sessionId === sessionId)?.name
    if (made !== undefined) {
      // Per-session credentials: the session is placed on it once it is ready (above).
      if (world.placesSessions) continue
      actions.push({ kind: 'answer', sessionId, answer: { ok: true, pod: made, created: false } })
    } else if (created < capacity) {
      created++
      actions.push({ kind: 'create', purpose: { kind: 'cold', sessionId } })
    } else {
      actions.push({
        kind: 'answer',
        sessionId,
        answer: { ok: false, code: 'POOL_EXHAUSTED', message: `controller.max_pods (${world.limits.maxPods}) sandbox pods exist` },
      })
    }
  }
  for (const pod of world.pods) {
    if (pod.state !== 'cold' || !isLive(pod) || doomed.has(pod.name) || pod.changing || pod.sessionId !== undefined || world.owners.has(pod.name)) continue
    const owner = pod.demandFor === undefined ? undefined : world.sessions.get(pod.demandFor)?.owner
    if (pod.demandFor === undefined || (owner !== undefined && owner !== pod.name)) {
      actions.push({ kind: 'warm', pod: pod.name, resourceVersion: pod.resourceVersion })
    } else if (pod.ready) {
      const deadline = (pod.readySince ?? world.now) + world.limits.claimTimeoutMs
      if (world.now >= deadline) actions.push({ kind: 'warm', pod: pod.name, resourceVersion: pod.resourceVersion })
      else wakeAt.push(deadline)
    }
  }
  return { actions, wakeAt, created }
}
