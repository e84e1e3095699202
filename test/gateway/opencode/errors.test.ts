import { describe, expect, it } from 'vitest'
import { ServiceError } from '../../../contract/mod.ts'
import { sessionNotFound, toNamedError } from '../../../gateway/opencode/errors.ts'

describe('opencode errors - service errors in OpenCode\'s named shape', () => {
  it.each([
    { error: sessionNotFound('ses_x'), status: 404, body: { name: 'NotFoundError', data: { message: 'Session not found: ses_x' } } },
    { error: new ServiceError('BAD_REQUEST', 'field "prompt" is required'), status: 400, body: { name: 'BadRequest', data: { message: 'field "prompt" is required', code: 'BAD_REQUEST' } } },
    { error: new ServiceError('BAD_JSON', 'bad'), status: 400, body: { name: 'BadRequest', data: { message: 'bad', code: 'BAD_JSON' } } },
    { error: new ServiceError('WORK_DIR_MISMATCH', 'w'), status: 409, body: { name: 'ConflictError', data: { message: 'w', code: 'WORK_DIR_MISMATCH' } } },
    { error: new ServiceError('RUNNER_UNAVAILABLE', 'r'), status: 503, body: { name: 'UnknownError', data: { message: 'r', code: 'RUNNER_UNAVAILABLE' } } },
    { error: new Error('boom'), status: 500, body: { name: 'UnknownError', data: { message: 'boom', code: 'INTERNAL' } } },
    // fastify's own failures keep their status, with the service's code for it.
    { error: Object.assign(new Error('Unsupported Media Type'), { statusCode: 415, code: 'FST_ERR_CTP_INVALID_MEDIA_TYPE' }), status: 415, body: { name: 'UnknownError', data: { message: 'Unsupported Media Type', code: 'UNSUPPORTED_MEDIA_TYPE' } } },
    { error: Object.assign(new Error('Request body is too large'), { statusCode: 413, code: 'FST_ERR_CTP_BODY_TOO_LARGE' }), status: 413, body: { name: 'UnknownError', data: { message: 'Request body is too large', code: 'PAYLOAD_TOO_LARGE' } } },
    { error: new ServiceError('UNAUTHORIZED', 'key'), status: 401, body: { name: 'UnknownError', data: { message: 'key', code: 'UNAUTHORIZED' } } },
  ])('$body.name $status', ({ error, status, body }) => {
    expect(toNamedError(error)).toEqual({ status, body })
  })
})
