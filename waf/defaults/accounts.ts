import type { WafRule } from '../rule.ts'
import { END, rule } from './fragments.ts'

/**
 * Account changes. Creating, deleting or changing the machine's users and
 * groups, their passwords, shells and password ageing is administration of
 * the host, not coding work in a sandbox (a Dockerfile that runs `useradd` is
 * written as data and passes). Looking accounts up (`id`, `getent passwd`,
 * `chage -l`, `passwd -S`) and asking for help passes.
 */
export const ACCOUNT_RULES: WafRule[] = [
  rule({
    id: 'acct.manage-users',
    pattern: String.raw`^(?:useradd|adduser|userdel|deluser|usermod|newusers|groupadd|addgroup|groupdel|delgroup|groupmod|lusermod|luseradd|luserdel|pw (?:useradd|userdel|usermod|groupadd|groupdel|groupmod)|dscl \S+ -(?:create|delete|append|passwd)|sysadminctl -(?:addUser|deleteUser|resetPasswordFor))\b(?!(?: -\S+){0,2} (?:-h|--help|--version)${END})`,
    flags: 'm',
    category: 'account_change',
    description: 'creates, deletes or changes a user or group account of the machine',
    applies_to: ['command'],
  }),
  rule({
    id: 'acct.password-or-shell',
    pattern: String.raw`^passwd(?!(?: \S+){0,2} (?:-S|--status|-h|--help)${END})(?: \S+){0,4}$|^(?:chage|chsh|chfn|vipw|vigr|pwconv|pwunconv|grpconv|grpunconv)\b(?!(?: \S+){0,2}? (?:-l|--list|-h|--help|--version)${END})`,
    flags: 'm',
    category: 'account_change',
    description: 'changes an account’s password, password ageing, login shell or details',
    applies_to: ['command'],
  }),
]
