import { describe, expect, it } from 'vitest'
import { ServiceError, toServiceError } from '../../../contract/mod.ts'
import { NotOwnerError } from '../../../runner/ownership/not-owner.ts'

describe('NotOwnerError', () => {
  it('not owner - a ServiceError with code NOT_OWNER that names the owning runner', () => {
    const error = new NotOwnerError('s1', 'r7')
    expect(error).toBeInstanceOf(ServiceError)
    expect(error.owner).toBe('r7')
    expect(error.toBody()).toEqual({ code: 'NOT_OWNER', message: 'session s1 is owned by runner r7' })
    expect(error.status).toBe(409)
    // The runner's error path keeps it as it is, owner included.
    expect(toServiceError(error)).toBe(error)
  })
})
