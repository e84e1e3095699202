import { z } from 'zod'

/**
 * The `sandbox` config section: how each session's agent CLI is confined
 * (README "Session sandbox"). `auto` = bubblewrap where it works here, else
 * none with a loud warning.
 */
export const SandboxModeSchema = z.enum(['auto', 'bwrap', 'none'])
export type SandboxMode = z.output<typeof SandboxModeSchema>

export const SandboxConfigSchema = z.strictObject({
  mode: SandboxModeSchema.default('auto'),
  /** The bubblewrap executable. */
  command: z.string().min(1).default('bwrap'),
  /** Base of the per-session CLI state directories (the CLI's HOME inside the sandbox: its transcripts). */
  state_dir: z.string().min(1).default('./data/cli-state'),
  /**
   * What relays the sandbox's loopback to the network gate with `engine.network: allowlist`:
   * `socat` (starts in a few ms), `node` (the service's own forwarder, about 40 ms), `auto` = socat when it is on PATH.
   */
  forwarder: z.enum(['auto', 'socat', 'node']).default('auto'),
  /** More host paths the sessions must not see (directories get an empty tmpfs, files an unreadable node). */
  hide: z.array(z.string().min(1)).default([]),
})
export type SandboxConfig = z.output<typeof SandboxConfigSchema>
export type SandboxForwarder = SandboxConfig['forwarder']

/** `engine.network`: what a sandboxed CLI may connect to (bwrap only; `none` mode cannot enforce it). */
export const EngineNetworkSchema = z.enum(['none', 'allowlist', 'open'])
export type EngineNetwork = z.output<typeof EngineNetworkSchema>

/** `host:port` (a bracketed IPv6 host is allowed), e.g. `api.anthropic.com:443`. */
export const HostPortSchema = z.string().regex(/^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+):\d{1,5}$/, 'expected host:port, e.g. api.anthropic.com:443')
