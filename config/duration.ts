/** Go-style durations as used in the config file: `500ms`, `30s`, `5m`, `1h30m`; `0` means off. */
const UNIT_MS = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000 } as const
const WHOLE = /^(?:\d+(?:\.\d+)?(?:ms|s|m|h))+$/
const PART = /(\d+(?:\.\d+)?)(ms|s|m|h)/g

/** Milliseconds of a duration string, or undefined when it is not one. */
export function parseDuration(text: string): number | undefined {
  if (text === '0') return 0
  if (!WHOLE.test(text)) return undefined
  let total = 0
  for (const [, amount, unit] of text.matchAll(PART)) total += Number(amount) * UNIT_MS[unit as keyof typeof UNIT_MS]
  return Math.round(total)
}
