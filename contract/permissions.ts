/**
 * NATS subject permissions per role: what each part of the service may publish
 * and subscribe to, and nothing more. Pure: the controller mints session
 * credentials from it, `scripts/nats-permissions.ts` prints a server's
 * `authorization` block from it, and tests check it against a real server.
 *
 * The subjects come from `subjects()` and the JetStream names the state layer
 * uses (`<prefix_>_events`, key-value buckets `<prefix_>_{sessions,runners,opencode}`).
 */
import { sessionToken, subjects } from './subjects.ts'

export type NatsRole = 'gateway' | 'controller' | 'runner' | 'warm-pod' | 'session-runner'

export type PermissionSpec =
  | { role: 'gateway' | 'controller' | 'runner'; prefix: string }
  /** A sandbox pod (`runnerId`, its pod name) before it is given a session: it may only receive its own assignment. */
  | { role: 'warm-pod'; prefix: string; runnerId: string }
  /** One sandbox pod (`runnerId`, its pod name) serving one session: it reaches that session only. */
  | { role: 'session-runner'; prefix: string; sessionId: string; runnerId: string }

export interface SubjectList {
  allow: string[]
  deny: string[]
}

export interface NatsPermissions {
  publish: SubjectList
  subscribe: SubjectList
  /**
   * May answer requests it received (NATS response permissions: a publish to the
   * request's reply subject, once, within the server's default 2 minutes) without a
   * publish permission on anyone's inbox.
   */
  allowResponses: boolean
  /** The client's inbox prefix (connection option `inboxPrefix`, config `nats.inbox_prefix`): its replies arrive only there. */
  inboxPrefix: string
}

/** The key-value buckets of a deployment (state/kv-registry.ts; documents: the OpenCode sessions and the tenants' session claims, gateway/server.ts). */
export const BUCKETS = ['sessions', 'runners', 'opencode', 'tenants'] as const

/** `prefix` with dots made underscores, as JetStream names are (state/keys.ts streamName). */
const nameOf = (prefix: string) => prefix.replaceAll('.', '_')

/** The JetStream names of a deployment. */
export function jetStreamNames(prefix: string) {
  const base = nameOf(prefix)
  const bucket = (name: string) => `${base}_${name}`
  return {
    events: `${base}_events`,
    bucket,
    /** The stream behind a key-value bucket. */
    bucketStream: (name: string) => `KV_${bucket(name)}`,
    /** A key's subject: per-key permissions work because a key is a subject. */
    key: (name: string, key: string) => `$KV.${bucket(name)}.${key}`,
  }
}

/**
 * The inbox prefix of a role: one per role, one per pod for session runners, so
 * no credential can subscribe to another's replies.
 */
export function inboxPrefixFor(spec: PermissionSpec): string {
  const base = `_INBOX_${nameOf(spec.prefix)}`
  return spec.role === 'session-runner' || spec.role === 'warm-pod' ? `${base}.pod.${spec.runnerId}` : `${base}.${spec.role}`
}

/**
 * The JetStream API a service role uses on the deployment's streams: look them
 * up, create and update them (every process opens the state it uses), read the
 * newest message of a subject, and ordered consumers for replay, listing and
 * watching (with their flow control). Deleting or purging is denied (`STREAM_ADMIN_DENY`).
 * Wildcards keep the JWT small: a client's CONNECT line (which carries it) is at most 4 KiB by default.
 */
function streamApi(streams: string[]): string[] {
  return [
    '$JS.API.INFO',
    ...streams.flatMap((s) => [
      `$JS.API.STREAM.*.${s}`,
      `$JS.API.STREAM.MSG.GET.${s}`,
      `$JS.API.DIRECT.GET.${s}`,
      `$JS.API.DIRECT.GET.${s}.>`,
      `$JS.API.CONSUMER.*.${s}`,
      `$JS.API.CONSUMER.*.${s}.>`,
      `$JS.API.CONSUMER.MSG.NEXT.${s}.*`,
      `$JS.FC.${s}.>`,
    ]),
  ]
}

/** What no role may do to the deployment's streams. */
export const STREAM_ADMIN_DENY = ['$JS.API.STREAM.DELETE.>', '$JS.API.STREAM.PURGE.>', '$JS.API.STREAM.MSG.DELETE.>'] as const

/** What `spec`'s role may do; see the chart README's permission table. */
export function permissionsFor(spec: PermissionSpec): NatsPermissions {
  const s = subjects(spec.prefix)
  const js = jetStreamNames(spec.prefix)
  const allStreams = [js.events, ...BUCKETS.map(js.bucketStream)]
  const allKeys = BUCKETS.map((b) => `$KV.${js.bucket(b)}.>`)
  const inboxPrefix = inboxPrefixFor(spec)
  const inbox = `${inboxPrefix}.>`
  const none: string[] = []
  switch (spec.role) {
    case 'gateway':
      return {
        publish: { allow: [s.runner('*'), s.place, s.control, s.controllerDemand, ...allKeys, ...streamApi(allStreams)], deny: [...STREAM_ADMIN_DENY] },
        subscribe: { allow: [s.allEvents, s.allLive, inbox], deny: none },
        allowResponses: false,
        inboxPrefix,
      }
    case 'controller':
      return {
        // Session errors (SANDBOX_LOST, SANDBOX_NOT_READY) go on the session's event subject; assignments
        // (with each session's credential) go to one pod's own subject.
        publish: { allow: [s.allEvents, s.assign('*'), ...allKeys, ...streamApi(allStreams)], deny: [...STREAM_ADMIN_DENY] },
        subscribe: { allow: [s.controllerDemand, inbox], deny: none },
        allowResponses: true,
        inboxPrefix,
      }
    case 'runner':
      // Every runner of the deployment shares this user: it reaches every session (pings and
      // takeovers need other runners' subjects and leases). Sandbox pods serving one session
      // get 'session-runner' instead.
      return {
        publish: {
          allow: [
            s.allEvents,
            s.allLive,
            s.runner('*'),
            `$KV.${js.bucket('sessions')}.>`,
            `$KV.${js.bucket('runners')}.>`,
            ...streamApi([js.events, js.bucketStream('sessions'), js.bucketStream('runners')]),
          ],
          deny: [...STREAM_ADMIN_DENY],
        },
        subscribe: { allow: [s.runner('*'), s.place, s.control, inbox], deny: none },
        allowResponses: true,
        inboxPrefix,
      }
    case 'warm-pod':
      // Nothing but its own assignment, and the answer to it (a response permission: NATS lets a
      // reply through although every publish is denied). It holds no session's credential.
      return {
        publish: { allow: none, deny: ['>'] },
        subscribe: { allow: [s.assign(spec.runnerId)], deny: none },
        allowResponses: true,
        inboxPrefix,
      }
    case 'session-runner': {
      const token = sessionToken(spec.sessionId)
      const key = js.key('sessions', sessionKeyOf(token))
      const lease = js.key('runners', spec.runnerId)
      return {
        publish: {
          allow: [
            s.events(spec.sessionId),
            s.live(spec.sessionId),
            key,
            lease,
            // Reads of its own registry record and lease by subject (direct get names the key in the subject).
            `$JS.API.DIRECT.GET.${js.bucketStream('sessions')}.${key}`,
            `$JS.API.DIRECT.GET.${js.bucketStream('runners')}.${lease}`,
            // The newest event of its own session, once the event stream allows direct gets.
            `$JS.API.DIRECT.GET.${js.events}.${s.events(spec.sessionId)}`,
            // Looking the streams up reveals their configuration and counts, no message.
            '$JS.API.INFO',
            ...allStreams.map((stream) => `$JS.API.STREAM.INFO.${stream}`),
          ],
          // Named although nothing above allows them: the request body of these names the subject, so no subject permission could narrow them to one session.
          deny: [`$JS.API.STREAM.MSG.GET.>`, `$JS.API.DIRECT.GET.*`, '$JS.API.CONSUMER.>'],
        },
        // Its own assignment subject: the controller renews the credential there before it expires.
        subscribe: { allow: [s.runner(spec.runnerId), s.assign(spec.runnerId), s.control, inbox], deny: none },
        allowResponses: true,
        inboxPrefix,
      }
    }
  }
}

/** state/keys.ts sessionKey, from the subject token: keys may not start with `~`. */
function sessionKeyOf(token: string): string {
  return token.startsWith('~') ? '=' + token.slice(1) : token
}

/** The roles of the static users a deployment has (warm pods and session runners are minted per pod by the controller). */
export const STATIC_ROLES = ['gateway', 'controller', 'runner'] as const
