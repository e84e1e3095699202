import { z } from 'zod'
import { parseDuration } from './duration.ts'

/**
 * The configuration's field kit: field types shared by the section schemas that
 * live beside their code (state/config.ts, gateway/limits/config.ts, …), which
 * service/config/schema.ts gathers into one. A leaf: it imports no other part of the project.
 */

const DurationInput = z.union([z.string(), z.number()], { error: 'expected a duration such as 500ms, 30s, 5m or 1h30m' })

/**
 * A duration (`500ms`, `30s`, `5m`, `1h30m`), milliseconds once parsed; `0` means off unless `allowZero` is false.
 * YAML turns a bare `0` into a number: it is the same as `"0"`. Any other bare number is refused, since its
 * unit would be a guess (seconds? milliseconds?); the message says to write the unit.
 */
export const DurationField = (fallback: string, { allowZero = true }: { allowZero?: boolean } = {}) =>
  DurationInput.default(fallback).transform((value, ctx) => toDuration(value, allowZero, ctx))

/** A duration with no default: absent stays undefined (a setting that falls back to another key), present is read as DurationField reads it. */
export const OptionalDurationField = ({ allowZero = true }: { allowZero?: boolean } = {}) =>
  DurationInput.optional().transform((value, ctx) => (value === undefined ? undefined : toDuration(value, allowZero, ctx)))

function toDuration(value: string | number, allowZero: boolean, ctx: z.RefinementCtx): number {
  const hint = `use e.g. 500ms, 30s, 5m, 1h30m${allowZero ? ', or 0 for off' : '; must be above 0'}`
  if (typeof value === 'number' && value !== 0) {
    ctx.addIssue({ code: 'custom', message: `invalid duration ${value}: a number needs a unit, e.g. "${value}s" or "${value}ms" (${hint})` })
    return z.NEVER
  }
  const text = typeof value === 'number' ? '0' : value
  const ms = parseDuration(text)
  if (ms === undefined || (ms === 0 && !allowZero)) {
    ctx.addIssue({ code: 'custom', message: `invalid duration ${JSON.stringify(value)} (${hint})` })
    return z.NEVER
  }
  return ms
}

const SIZE_UNITS = { b: 1, kib: 1024, mib: 1024 ** 2, gib: 1024 ** 3, kb: 1000, mb: 1000 ** 2, gb: 1000 ** 3 } as const
const SIZE = /^(\d+)\s*(b|kib|mib|gib|kb|mb|gb)?$/i

/** Bytes of a size such as `1048576`, `512KiB`, `1MiB`, `2MB`; undefined when it is not one. */
export function parseSize(text: string): number | undefined {
  const match = SIZE.exec(text.trim())
  if (!match) return undefined
  const unit = (match[2] ?? 'b').toLowerCase() as keyof typeof SIZE_UNITS
  return Number(match[1]) * SIZE_UNITS[unit]
}

/** A byte size: an integer, or a string with a unit (`KiB`, `MiB`, `GiB`, `KB`, `MB`, `GB`). */
export const SizeField = (fallback: string, min = 1) =>
  z
    .union([z.number().int(), z.string()])
    .default(fallback)
    .transform((value, ctx) => {
      const bytes = typeof value === 'number' ? value : parseSize(value)
      if (bytes === undefined || !Number.isSafeInteger(bytes) || bytes < min) {
        ctx.addIssue({ code: 'custom', message: `invalid size ${JSON.stringify(value)} (use bytes, or e.g. 512KiB, 1MiB; at least ${min})` })
        return z.NEVER
      }
      return bytes
    })

/** A list given as a YAML sequence or as one comma-separated string (the form environment variables take). */
export const CommaList = z
  .union([z.string(), z.array(z.string())])
  .transform((value) => (typeof value === 'string' ? value.split(',') : value).map((item) => item.trim()).filter((item) => item !== ''))
