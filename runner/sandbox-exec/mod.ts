/** The kernel sandbox around each session's agent CLI (bubblewrap), its config and its network gate. */
export { SessionSandbox, unsandboxed, GATE_DIR_INSIDE } from './session-sandbox.ts'
export type { Launch, LaunchRequest, ResolvedSandbox, SandboxSettings } from './session-sandbox.ts'
export { SandboxConfigSchema, EngineNetworkSchema, HostPortSchema } from './config.ts'
export type { SandboxConfig, SandboxMode, EngineNetwork } from './config.ts'
export { probeBwrap } from './probe.ts'
export type { ProbeResult } from './probe.ts'
