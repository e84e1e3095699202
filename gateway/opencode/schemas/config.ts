import { z } from 'zod'

/**
 * GET /config (spec §2.8): the server's version and what it offers. OpenCode
 * clients read `share` (`opencode run` shares the session when it is "auto").
 * Nothing secret goes here: no keys, no paths, no environment.
 */
export const ServerConfig = z.object({
  share: z.literal('disabled'),
  /**
   * OpenCode's `permission` setting: `ask`, a tool call may wait for a person's
   * yes (permission.asked, answered on POST /permission/{requestID}/reply).
   * Whether an engine asks is its `engine.approval`, which the gateway cannot see.
   */
  permission: z.literal('ask'),
  version: z.string(),
  engines: z.array(z.object({ name: z.string(), version: z.string() })),
  surfaces: z.object({
    websocket: z.string(),
    rest: z.array(z.string()),
    sse: z.array(z.string()),
    chat: z.string(),
  }),
  auth: z.object({ enabled: z.boolean(), carriers: z.array(z.string()) }),
})
export type ServerConfig = z.output<typeof ServerConfig>
