import pino, { type Logger } from 'pino'
import { LOG_REDACT_PATHS, REDACTED, scrubber } from '../observability/redact.ts'

/**
 * JSON logs on stdout: `level` as a word, `msg`, and the deployment's
 * namespace on every line. Secret fields are censored, and the values in
 * `secrets` (observability/redact.ts: secretsOf) never reach the output.
 */
export function createLogger(level: string, namespace: string, secrets: readonly string[] = []): Logger {
  const scrub = scrubber(secrets)
  return pino({
    level,
    base: { namespace },
    formatters: { level: (label) => ({ level: label }) },
    timestamp: pino.stdTimeFunctions.isoTime,
    redact: { paths: [...LOG_REDACT_PATHS], censor: REDACTED },
    ...(scrub && { hooks: { streamWrite: scrub } }),
  })
}
