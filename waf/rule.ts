import { z } from 'zod'
import { nestedQuantifierProblem } from './regex-safety.ts'

/**
 * WAF rules are data: a regex source plus what it means. The same schema
 * validates the default set (in a test) and the extra rules of the
 * configuration file, so an operator's rule is held to the same standard.
 */

/**
 * What a rule is matched against (see README "Targets"):
 * - `prompt`: the user's prompt as natural language;
 * - `command`: a shell command after parsing — one simple command per line
 *   (quotes removed, wrappers such as sudo/env/xargs stripped, `sh -c`, `eval`,
 *   `$(…)` and decoded `base64 -d | sh` payloads unwrapped), then one line per
 *   pipeline with its commands joined by ` | `;
 * - `command_text`: the command as written (line continuations joined, blanks
 *   collapsed), plus any payload decoded from it — for signatures that live
 *   inside quoted code (a Python reverse shell, a fork bomb);
 * - `read_path` / `write_path`: a file a tool reads / writes (home shown as `~`);
 * - `url`: a URL a tool fetches, or one found in a command (host canonicalised);
 * - `content`: text a tool writes into a file (no default rule checks it).
 */
export const WAF_TARGETS = ['prompt', 'command', 'command_text', 'read_path', 'write_path', 'url', 'content'] as const
export type WafTarget = (typeof WAF_TARGETS)[number]

export const WAF_CATEGORIES = [
  'filesystem_destruction',
  'privilege_escalation',
  'account_change',
  'reverse_shell',
  'remote_code_execution',
  'credential_theft',
  'exfiltration',
  'resource_exhaustion',
  'security_tampering',
  'anti_forensics',
  'crypto_mining',
  'kernel_tampering',
  'boot_tampering',
  'denial_of_service',
  'persistence',
  'container_escape',
  'source_control',
  'custom',
] as const
export type WafCategory = (typeof WAF_CATEGORIES)[number]

/** `block` stops the input; `warn` only reports the match. */
export const WAF_LEVELS = ['block', 'warn'] as const
export type WafLevel = (typeof WAF_LEVELS)[number]

export const RuleId = z
  .string()
  .regex(/^[a-z0-9]+(?:[.-][a-z0-9]+)*$/, { error: 'rule id must be lowercase words joined by "." or "-", e.g. "fs.rm-root"' })
  .max(80)

export const WafRuleSchema = z
  .strictObject({
    /** Stable identifier, reported in every match and used by `disabled_rules`. */
    id: RuleId,
    /** JavaScript regular expression source. */
    pattern: z.string().min(1).max(8000),
    /** RegExp flags; `g` and `y` are refused because they make a RegExp stateful. */
    flags: z
      .string()
      .regex(/^[dimsuv]*$/, { error: 'flags may only contain d, i, m, s, u, v (g and y make a RegExp stateful)' })
      .refine((f) => new Set(f).size === f.length, { error: 'flags must not repeat a letter' })
      .default(''),
    category: z.enum(WAF_CATEGORIES, { error: `unknown category; use one of: ${WAF_CATEGORIES.join(', ')}` }),
    level: z.enum(WAF_LEVELS, { error: 'level must be "block" or "warn"' }).default('block'),
    /** Shown to the agent and the client when the rule matches: say why it is dangerous. */
    description: z.string().min(1).max(500),
    applies_to: z
      .array(z.enum(WAF_TARGETS, { error: `unknown target; use one of: ${WAF_TARGETS.join(', ')}` }))
      .min(1, { error: 'applies_to must name at least one target' })
      .refine((t) => new Set(t).size === t.length, { error: 'applies_to must not repeat a target' }),
    enabled: z.boolean().default(true),
  })
  .superRefine((rule, ctx) => {
    let regex: RegExp
    try {
      regex = new RegExp(rule.pattern, rule.flags)
    } catch (err) {
      ctx.addIssue({ code: 'custom', path: ['pattern'], message: `invalid regular expression: ${(err as Error).message}` })
      return
    }
    if (regex.test('')) {
      ctx.addIssue({ code: 'custom', path: ['pattern'], message: 'pattern matches the empty string, so it would match every input' })
    }
    const problem = nestedQuantifierProblem(rule.pattern)
    if (problem !== undefined) ctx.addIssue({ code: 'custom', path: ['pattern'], message: `WAF rule "${rule.id}": ${problem}` })
  })

export type WafRule = z.output<typeof WafRuleSchema>
export type WafRuleInput = z.input<typeof WafRuleSchema>
