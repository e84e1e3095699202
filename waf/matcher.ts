import { normalizePath, urlForms, type LocationOptions } from './locations.ts'
import { instructedCommands, normalizePrompt } from './prompt-commands.ts'
import { excerpt } from './redact.ts'
import { WafRuleSchema, type WafCategory, type WafLevel, type WafRule, type WafRuleInput, type WafTarget } from './rule.ts'
import type { FsView } from './shell/expand.ts'
import { commandViews } from './shell/views.ts'
import { toolCallFields, type WafInput } from './tool-call.ts'

/**
 * The WAF matcher: pure functions from (text or tool call, rules) to a
 * verdict. No I/O, no clock, no state beyond the compiled-rules cache.
 */

export interface WafMatch {
  rule_id: string
  /** `inspection` for the matcher's own findings (input too large or too complex). */
  category: WafCategory | 'inspection'
  level: WafLevel
  description: string
  /** The matched text, secrets masked, at most 160 characters. */
  excerpt: string
  /** The view the rule matched in. */
  target: WafTarget
  /** For a tool call: the input field the text came from. */
  field?: string
}

export interface InspectResult {
  /** True when at least one match has level `block`. */
  blocked: boolean
  matches: WafMatch[]
}

export interface CompiledRule {
  readonly rule: WafRule
  readonly regex: RegExp
}

/** Enabled rules with their regexes built once, indexed by target. */
export interface CompiledRules {
  readonly rules: readonly CompiledRule[]
  readonly byTarget: ReadonlyMap<WafTarget, readonly CompiledRule[]>
}

export interface InspectOptions extends LocationOptions {
  /** Inputs longer than this (characters) are blocked whole instead of inspected (default 1,000,000). */
  maxChars?: number
  /**
   * The filesystem globs in commands are expanded against (`rm -rf /et?` → `/etc`), with the
   * working directory of the call. Default: a standard Linux root layout and no working directory.
   */
  fs?: FsView | undefined
}

/** The default size cap: far above any real prompt, command or path. */
export const DEFAULT_MAX_INSPECT_CHARS = 1_000_000

/** A rule that does not validate; `ruleId` names it (when it has one). */
export class WafRuleError extends Error {
  override readonly name = 'WafRuleError'
  readonly ruleId: string | undefined
  constructor(message: string, ruleId: string | undefined, options?: { cause?: unknown }) {
    super(message, options)
    this.ruleId = ruleId
  }
}

/** Validates the rules and builds each enabled rule's RegExp once. Throws WafRuleError. */
export function compileRules(rules: readonly WafRuleInput[]): CompiledRules {
  const compiled: CompiledRule[] = []
  const ids = new Set<string>()
  for (const [index, input] of rules.entries()) {
    const parsed = WafRuleSchema.safeParse(input)
    const id = typeof (input as { id?: unknown }).id === 'string' ? (input as { id: string }).id : undefined
    if (!parsed.success) {
      const detail = parsed.error.issues.map((i) => `${i.path.join('.') || 'rule'}: ${i.message}`).join('; ')
      throw new WafRuleError(`WAF rule ${id ?? `#${index}`}: ${detail}`, id, { cause: parsed.error })
    }
    const rule = parsed.data
    if (ids.has(rule.id)) throw new WafRuleError(`WAF rule ${rule.id}: the id is used twice`, rule.id)
    ids.add(rule.id)
    if (rule.enabled) compiled.push({ rule, regex: new RegExp(rule.pattern, rule.flags) })
  }
  const byTarget = new Map<WafTarget, CompiledRule[]>()
  for (const c of compiled) {
    for (const target of c.rule.applies_to) byTarget.set(target, [...(byTarget.get(target) ?? []), c])
  }
  return { rules: compiled, byTarget }
}

const cache = new WeakMap<readonly WafRuleInput[], CompiledRules>()

/** Compiled rules as given, or the cached compilation of a rule list. */
function compiled(rules: CompiledRules | readonly WafRuleInput[]): CompiledRules {
  if (!Array.isArray(rules)) return rules as CompiledRules
  const list = rules as readonly WafRuleInput[]
  let hit = cache.get(list)
  if (hit === undefined) {
    hit = compileRules(list)
    cache.set(list, hit)
  }
  return hit
}

interface View {
  target: WafTarget
  text: string
}

/**
 * Inspects one input. `input` says what the text is; the matcher derives the
 * views rules apply to (a command gives `command`, `command_text` and `url`;
 * a prompt gives `prompt` plus the views of every command it asks to run).
 */
export function inspect(text: string, input: WafInput, rules: CompiledRules | readonly WafRuleInput[], options: InspectOptions = {}): InspectResult {
  const set = compiled(rules)
  const max = options.maxChars ?? DEFAULT_MAX_INSPECT_CHARS
  if (text.length > max) {
    return verdict([
      {
        rule_id: 'waf.input-too-large',
        category: 'inspection',
        level: 'block',
        description: `the ${input} is ${text.length} characters long, over the inspection limit of ${max}; it is blocked rather than inspected in part`,
        excerpt: excerpt(text.slice(0, 80)),
        target: input,
      },
    ])
  }
  const { views, tooComplex } = viewsOf(text, input, set, options)
  const matches: WafMatch[] = []
  const seen = new Set<string>()
  for (const view of views) {
    for (const { rule, regex } of set.byTarget.get(view.target) ?? []) {
      if (seen.has(rule.id)) continue
      const m = regex.exec(view.text)
      if (m === null) continue
      seen.add(rule.id)
      matches.push({
        rule_id: rule.id,
        category: rule.category,
        level: rule.level,
        description: rule.description,
        excerpt: excerpt(around(view.text, m)),
        target: view.target,
      })
    }
  }
  if (tooComplex) {
    matches.push({
      rule_id: 'waf.input-too-complex',
      category: 'inspection',
      level: 'block',
      description: 'the command nests substitutions or shells (sh -c, $(…), eval) deeper than the WAF follows; it is blocked rather than inspected in part',
      excerpt: excerpt(text.slice(0, 80)),
      target: 'command',
    })
  }
  return verdict(matches)
}

/** Inspects every field of a Claude Code tool call; matches carry the field they came from. */
export function inspectToolCall(toolName: string, input: unknown, rules: CompiledRules | readonly WafRuleInput[], options: InspectOptions = {}): InspectResult {
  const set = compiled(rules)
  const matches: WafMatch[] = []
  const seen = new Set<string>()
  for (const f of toolCallFields(toolName, input)) {
    for (const match of inspect(f.text, f.input, set, options).matches) {
      if (seen.has(match.rule_id)) continue
      seen.add(match.rule_id)
      matches.push({ ...match, field: f.field })
    }
  }
  return verdict(matches)
}

/** One line for the agent and the client: which rules blocked the input and why. */
export function blockReason(result: InspectResult): string {
  const blocking = result.matches.filter((m) => m.level === 'block')
  return blocking.map((m) => `blocked by WAF rule ${m.rule_id} (${m.category}): ${m.description} — matched "${m.excerpt}"`).join('; ')
}

/**
 * The text to show for a match: the line it is on (a simple command in the
 * parsed view), starting a little before the match when the line is long.
 * Rules often match only an anchor and check the rest with lookaheads.
 */
function around(text: string, m: RegExpExecArray): string {
  const end = m.index + m[0].length
  const lineStart = text.lastIndexOf('\n', m.index - 1) + 1
  const nl = text.indexOf('\n', end)
  const lineEnd = nl === -1 ? text.length : nl
  if (m[0].includes('\n')) return m[0]
  const start = Math.max(lineStart, Math.min(m.index, end - 120) - 40)
  return text.slice(start, Math.min(lineEnd, start + 600))
}

function verdict(matches: WafMatch[]): InspectResult {
  return { blocked: matches.some((m) => m.level === 'block'), matches }
}

const COMMAND_VIEWS: readonly WafTarget[] = ['command', 'command_text', 'url']

function viewsOf(text: string, input: WafInput, set: CompiledRules, options: InspectOptions): { views: View[]; tooComplex: boolean } {
  const wanted = (targets: readonly WafTarget[]) => targets.some((t) => (set.byTarget.get(t)?.length ?? 0) > 0)
  switch (input) {
    case 'prompt': {
      const prompt = normalizePrompt(text)
      const views: View[] = [{ target: 'prompt', text: prompt }]
      let tooComplex = false
      if (wanted(COMMAND_VIEWS)) {
        for (const command of instructedCommands(prompt)) {
          const v = commandViewList(command, options)
          views.push(...v.views)
          tooComplex ||= v.tooComplex
        }
      }
      return { views, tooComplex }
    }
    case 'command':
      return wanted(COMMAND_VIEWS) ? commandViewList(text, options) : { views: [], tooComplex: false }
    case 'read_path':
    case 'write_path':
      return { views: [{ target: input, text: normalizePath(text, options) }], tooComplex: false }
    case 'url':
      return { views: urlForms(text.trim()).map((u) => ({ target: 'url' as const, text: u })), tooComplex: false }
    case 'content':
      return { views: [{ target: 'content', text }], tooComplex: false }
  }
}

function commandViewList(command: string, options: InspectOptions): { views: View[]; tooComplex: boolean } {
  const v = commandViews(command, { fs: options.fs, home: options.home })
  return {
    views: [
      { target: 'command', text: v.parsed },
      { target: 'command_text', text: v.text },
      ...v.urls.flatMap(urlForms).map((u) => ({ target: 'url' as const, text: u })),
    ],
    tooComplex: v.tooComplex,
  }
}
