import type { FastifyInstance } from 'fastify'
import { z } from 'zod'
import { ServiceError } from '../contract/mod.ts'
import { invalidFieldMessage } from './errors.ts'
import { parseBody } from './json-body.ts'

/**
 * Route schemas are zod schemas, declared once beside the route (`schema: {querystring, params,
 * body, response}`): fastify validates requests with them here, and the OpenAPI document
 * (gateway/docs/) is generated from the same objects. A failure is a BAD_REQUEST naming the
 * field, answered in each surface's own error shape by its error handler.
 */
export function useZodRouteSchemas(app: FastifyInstance): void {
  app.setValidatorCompiler(({ schema, httpPart }) => {
    const part = zodSchema(schema, httpPart ?? 'request')
    return (data: unknown) => {
      try {
        return { value: httpPart === 'body' ? parseBody(part, data) : parsePart(part, data ?? {}, httpPart ?? 'request') }
      } catch (err) {
        return { error: err as Error }
      }
    }
  })
  // Answers are built by the handlers from the same types: serialized as they are.
  app.setSerializerCompiler(() => (data) => JSON.stringify(data))
}

/** Is this a zod schema (rather than a plain JSON Schema object). */
export function isZodSchema(schema: unknown): schema is z.ZodType {
  return schema instanceof z.ZodType
}

function zodSchema(schema: unknown, part: string): z.ZodType {
  if (!isZodSchema(schema)) throw new Error(`the ${part} schema of a gateway route must be a zod schema (gateway/route-schemas.ts)`)
  return schema
}

/** Validates the query string, path parameters or headers; the error names the parameter. */
function parsePart(schema: z.ZodType, data: unknown, part: string): unknown {
  const result = schema.safeParse(data)
  if (result.success) return result.data
  throw new ServiceError(
    'BAD_REQUEST',
    invalidFieldMessage(result.error.issues[0]!, data, part).replace(/^field /, part === 'querystring' ? 'query parameter ' : `${part} `),
  )
}
