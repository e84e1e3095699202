/** The runner: serves session commands from the bus and runs agent CLIs. */
export { Runner } from './runner.ts'
export type { RunnerOptions } from './runner.ts'
export type { SessionSettings } from './session/session.ts'
export type { DangerBlock, RunnerObserver } from './observer.ts'
export { createEngine } from './engine/create.ts'
export { EngineSet } from './engine/engine-set.ts'
export type { EngineSlot } from './engine/engine-set.ts'
export type { Engine } from './engine/engine.ts'
