import { ServiceError, type Command } from '../contract/mod.ts'

/** How long ago the gateway stopped waiting for this command's answer (0 when it still waits, or set no deadline). */
export function lateBy(command: Command): number {
  return 'deadline' in command && command.deadline !== undefined ? Math.max(0, Date.now() - command.deadline) : 0
}

export function pastDeadline(command: Command): boolean {
  return lateBy(command) > 0
}

/** The error of a command that came too late: not carried out. */
export function expired(command: Command): ServiceError {
  return new ServiceError('RUNNER_TIMEOUT', `the ${command.type} command reached the runner after the gateway stopped waiting for it; it was not carried out`)
}
