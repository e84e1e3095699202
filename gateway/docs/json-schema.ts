import { z } from 'zod'
import { isZodSchema } from '../route-schemas.ts'

/**
 * A zod schema as JSON Schema for a document. `io: 'input'` describes what a client sends
 * (a query's `limit` is a string before it becomes a number), `output` what it receives.
 * Parts zod cannot express in JSON Schema become `{}` (any value) rather than failing. Pure.
 */
export function toJsonSchema(schema: z.ZodType, io: 'input' | 'output', target: 'draft-2020-12' | 'draft-7' = 'draft-2020-12'): Record<string, unknown> {
  const { $schema: _dialect, ...rest } = z.toJSONSchema(schema, { io, target, unrepresentable: 'any' }) as Record<string, unknown>
  return rest
}

/** A route's schema (fastify's `schema` option) with every zod part as JSON Schema, everything else as it was. Pure. */
export function routeSchemaToJson(schema: Record<string, unknown>): Record<string, unknown> {
  const converted: Record<string, unknown> = { ...schema }
  for (const part of ['querystring', 'params', 'headers', 'body'] as const) {
    const value = schema[part]
    if (isZodSchema(value)) converted[part] = toJsonSchema(value, 'input')
  }
  if (schema.response !== undefined && typeof schema.response === 'object' && schema.response !== null) {
    converted.response = Object.fromEntries(Object.entries(schema.response).map(([status, answer]) => [status, responseToJson(answer)]))
  }
  return converted
}

/** One status's answer: a zod schema, or `{content: {<media type>: {schema}}}` with zod schemas inside. */
function responseToJson(answer: unknown): unknown {
  if (isZodSchema(answer)) return toJsonSchema(answer, 'output')
  const content = (answer as { content?: Record<string, { schema?: unknown }> } | null)?.content
  if (content === undefined) return answer
  return {
    ...(answer as object),
    content: Object.fromEntries(
      Object.entries(content).map(([mediaType, entry]) => [
        mediaType,
        { ...entry, schema: isZodSchema(entry.schema) ? toJsonSchema(entry.schema, 'output') : entry.schema },
      ]),
    ),
  }
}
