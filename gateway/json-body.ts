import type { FastifyInstance, FastifyRequest } from 'fastify'
import type { z } from 'zod'
import { ServiceError } from '../contract/mod.ts'
import { invalidFieldMessage } from './errors.ts'

const UTF8 = new TextDecoder('utf-8', { fatal: true })

/**
 * The JSON body parser of the service's routes: the body must be UTF-8
 * (RFC 8259; fastify would quietly replace bad bytes with U+FFFD and run the
 * request with text the client never sent) and JSON, parsed by fastify's own
 * parser, which refuses `__proto__` and `constructor.prototype` keys. Every
 * refusal is BAD_JSON (400). With `emptyIsUndefined`, an empty body is no
 * body (OpenCode clients send `Content-Type: application/json` with none).
 */
export function strictJsonBody(scope: FastifyInstance, options: { emptyIsUndefined?: boolean } = {}): void {
  const parse = scope.getDefaultJsonParser('error', 'error') as (
    request: FastifyRequest,
    body: string,
    done: (err: Error | null, value?: unknown) => void,
  ) => void
  scope.removeContentTypeParser('application/json')
  scope.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, body, done) => {
    let text: string
    try {
      text = UTF8.decode(body as Buffer)
    } catch {
      return done(new ServiceError('BAD_JSON', 'the body is not valid UTF-8'), undefined)
    }
    if (options.emptyIsUndefined && text.trim() === '') return done(null, undefined)
    parse(request, text, (err, value) => {
      if (err) done(new ServiceError('BAD_JSON', `the body is not valid JSON: ${err.message}`, { cause: err }), undefined)
      else done(null, value)
    })
  })
}

/** Validates a body (`undefined` counts as `{}`); the error names the field that is wrong. */
export function parseBody<S extends z.ZodType>(schema: S, raw: unknown): z.output<S> {
  const body = raw === undefined || raw === null || raw === '' ? {} : raw
  if (typeof body !== 'object' || Array.isArray(body)) {
    throw new ServiceError('BAD_REQUEST', 'the body must be a JSON object')
  }
  const result = schema.safeParse(body)
  if (result.success) return result.data
  throw new ServiceError('BAD_REQUEST', invalidFieldMessage(result.error.issues[0]!, body))
}
