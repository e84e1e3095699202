/** The bus: one interface, an in-process and a NATS implementation. */
export { BusClosedError, BusNoRespondersError, BusTimeoutError, subjectMatches } from './bus.ts'
export type { Bus, BusMessage, Headers, RequestOptions, SubscribeOptions, Subscription } from './bus.ts'
export { MemoryBus } from './memory.ts'
export type { MemoryBusLogger } from './memory.ts'
export { NatsBus } from './nats.ts'
export type { NatsAuth, NatsBusLogger, NatsBusOptions, NatsBusStatus } from './nats.ts'
