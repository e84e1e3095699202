import type { FastifyInstance, FastifyRequest } from 'fastify'
import { ErrorBody } from '../../../contract/errors.ts'
import { SessionDeleted, SessionIdParams, SessionList, SessionListQuery, SessionSummary } from '../../../contract/sessions.ts'
import type { SessionDirectory } from './directory.ts'

/** The directory's answers when it refuses: a bad query, no key, another tenant's or an unknown session. */
const REFUSALS = { 400: ErrorBody, 401: ErrorBody, 404: ErrorBody }

/**
 * GET /v1/sessions, GET /v1/sessions/{id}, DELETE /v1/sessions/{id}: the sessions of the
 * caller's tenant, whichever surface made them. Errors in the service's `{code, message}`.
 */
export function registerDirectoryRoutes(app: FastifyInstance, directory: SessionDirectory, tenant: (request: FastifyRequest) => string): void {
  app.get(
    '/v1/sessions',
    {
      schema: {
        summary: 'List the sessions of the caller’s tenant',
        tags: ['sessions'],
        querystring: SessionListQuery,
        response: { 200: SessionList, ...REFUSALS },
      },
    },
    async (request) => directory.list(tenant(request), request.query as SessionListQuery),
  )
  app.get(
    '/v1/sessions/:id',
    {
      schema: {
        summary: 'One session: state, owner runner, work_dir, times, queued turns, stats',
        tags: ['sessions'],
        params: SessionIdParams,
        response: { 200: SessionSummary, ...REFUSALS },
      },
    },
    async (request) => directory.get(tenant(request), (request.params as SessionIdParams).id),
  )
  app.delete(
    '/v1/sessions/:id',
    {
      schema: {
        summary: 'Stop the session’s work, end its process and forget it',
        tags: ['sessions'],
        params: SessionIdParams,
        response: { 200: SessionDeleted, ...REFUSALS, 503: ErrorBody, 504: ErrorBody },
      },
    },
    async (request) => directory.delete(tenant(request), (request.params as SessionIdParams).id),
  )
}
