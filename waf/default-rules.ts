import { ACCOUNT_RULES } from './defaults/accounts.ts'
import { CREDENTIAL_RULES } from './defaults/credentials.ts'
import { FILESYSTEM_RULES } from './defaults/filesystem.ts'
import { PRIVILEGE_RULES } from './defaults/privilege.ts'
import { PROMPT_RULES } from './defaults/prompt.ts'
import { REMOTE_ACCESS_RULES } from './defaults/remote-access.ts'
import { SYSTEM_RULES } from './defaults/system.ts'
import { TAMPERING_RULES } from './defaults/tampering.ts'
import type { WafRule } from './rule.ts'

/** The default rule set, one file per family under defaults/ (each file says what it blocks and why). */
export const DEFAULT_RULES: readonly WafRule[] = Object.freeze([
  ...FILESYSTEM_RULES,
  ...PRIVILEGE_RULES,
  ...ACCOUNT_RULES,
  ...REMOTE_ACCESS_RULES,
  ...CREDENTIAL_RULES,
  ...SYSTEM_RULES,
  ...TAMPERING_RULES,
  ...PROMPT_RULES,
])
