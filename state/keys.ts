import { sessionToken } from '../contract/subjects.ts'

/** A JetStream name (stream, bucket) derived from the subject prefix. */
export function streamName(subjectPrefix: string, suffix: string): string {
  return `${subjectPrefix.replaceAll('.', '_')}_${suffix}`
}

/**
 * A key-value key for a session id. Subject tokens may start with `~`, which
 * keys may not hold, so encoded ids start with `=` there (no safe id has it).
 */
export function sessionKey(sessionId: string): string {
  const token = sessionToken(sessionId)
  return token.startsWith('~') ? '=' + token.slice(1) : token
}
