import { describe, expect, it } from 'vitest'
import { ServiceError } from '../../../contract/mod.ts'
import { sessionNotFound, toNamedError, toSteeringError, type SteeringPlace } from '../../../gateway/opencode/errors.ts'

describe("opencode errors - service errors in OpenCode's named shape", () => {
  it.each([
    { error: sessionNotFound('ses_x'), status: 404, body: { name: 'NotFoundError', data: { message: 'Session not found: ses_x' } } },
    {
      error: new ServiceError('BAD_REQUEST', 'field "prompt" is required'),
      status: 400,
      body: { name: 'BadRequest', data: { message: 'field "prompt" is required', code: 'BAD_REQUEST' } },
    },
    { error: new ServiceError('BAD_JSON', 'bad'), status: 400, body: { name: 'BadRequest', data: { message: 'bad', code: 'BAD_JSON' } } },
    { error: new ServiceError('WORK_DIR_MISMATCH', 'w'), status: 409, body: { name: 'ConflictError', data: { message: 'w', code: 'WORK_DIR_MISMATCH' } } },
    { error: new ServiceError('RUNNER_UNAVAILABLE', 'r'), status: 503, body: { name: 'UnknownError', data: { message: 'r', code: 'RUNNER_UNAVAILABLE' } } },
    { error: new Error('boom'), status: 500, body: { name: 'UnknownError', data: { message: 'boom', code: 'INTERNAL' } } },
    // fastify's own failures keep their status, with the service's code for it.
    {
      error: Object.assign(new Error('Unsupported Media Type'), { statusCode: 415, code: 'FST_ERR_CTP_INVALID_MEDIA_TYPE' }),
      status: 415,
      body: { name: 'UnknownError', data: { message: 'Unsupported Media Type', code: 'UNSUPPORTED_MEDIA_TYPE' } },
    },
    {
      error: Object.assign(new Error('Request body is too large'), { statusCode: 413, code: 'FST_ERR_CTP_BODY_TOO_LARGE' }),
      status: 413,
      body: { name: 'UnknownError', data: { message: 'Request body is too large', code: 'PAYLOAD_TOO_LARGE' } },
    },
    { error: new ServiceError('UNAUTHORIZED', 'key'), status: 401, body: { name: 'UnknownError', data: { message: 'key', code: 'UNAUTHORIZED' } } },
  ])('$body.name $status', ({ error, status, body }) => {
    expect(toNamedError(error)).toEqual({ status, body })
  })
})

describe("opencode errors - steering routes in OpenCode 1.18's tagged shapes", () => {
  const permission: SteeringPlace = { kind: 'permission', api: 'v1', requestID: 'per_1' }
  const question: SteeringPlace = { kind: 'question', api: 'v2', requestID: 'que_1', sessionID: 'ses_1' }
  it.each<{ name: string; error: unknown; place: SteeringPlace; status: number; body: unknown }>([
    {
      name: 'not waiting',
      error: new ServiceError('PERMISSION_NOT_FOUND', 'x'),
      place: permission,
      status: 404,
      body: { _tag: 'PermissionNotFoundError', requestID: 'per_1', message: 'Permission request not found: per_1' },
    },
    {
      name: 'a question not waiting',
      error: new ServiceError('PERMISSION_NOT_FOUND', 'x'),
      place: question,
      status: 404,
      body: { _tag: 'QuestionNotFoundError', requestID: 'que_1', message: 'Question request not found: que_1' },
    },
    {
      name: 'settled already',
      error: new ServiceError('ALREADY_ANSWERED', 'settled (timed out)'),
      place: permission,
      status: 404,
      body: { _tag: 'PermissionNotFoundError', requestID: 'per_1', message: 'settled (timed out)', code: 'ALREADY_ANSWERED' },
    },
    {
      name: 'the session unknown, the route naming only the request',
      error: sessionNotFound('ses_x'),
      place: permission,
      status: 404,
      body: { _tag: 'PermissionNotFoundError', requestID: 'per_1', message: 'Permission request not found: per_1' },
    },
    {
      name: 'the session unknown on /api',
      error: sessionNotFound('ses_1'),
      place: question,
      status: 404,
      body: { _tag: 'SessionNotFoundError', sessionID: 'ses_1', message: 'Session not found: ses_1' },
    },
    {
      name: 'the session unknown on the older route',
      error: sessionNotFound('ses_1'),
      place: { kind: 'permission', api: 'v1', requestID: 'per_1', sessionID: 'ses_1' },
      status: 404,
      body: { name: 'NotFoundError', data: { message: 'Session not found: ses_1' } },
    },
    {
      name: 'a bad answer',
      error: new ServiceError('BAD_REQUEST', 'decision maybe is not offered'),
      place: permission,
      status: 400,
      body: { _tag: 'InvalidRequestError', message: 'decision maybe is not offered', code: 'BAD_REQUEST' },
    },
    {
      name: 'a body that is no JSON',
      error: new ServiceError('BAD_JSON', 'bad'),
      place: question,
      status: 400,
      body: { _tag: 'InvalidRequestError', message: 'bad', code: 'BAD_JSON' },
    },
    {
      name: 'no runner',
      error: new ServiceError('RUNNER_TIMEOUT', 'late'),
      place: permission,
      status: 504,
      body: { name: 'UnknownError', data: { message: 'late', code: 'RUNNER_TIMEOUT' } },
    },
  ])('steering error - $name', ({ error, place, status, body }) => {
    expect(toSteeringError(error, place)).toEqual({ status, body })
  })
})
