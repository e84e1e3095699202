import type { WafRule } from '../rule.ts'
import { END, SHELL, rule, writes } from './fragments.ts'

/**
 * Privilege escalation. `sudo` itself is not blocked: where the sandbox grants
 * it, `sudo apt-get install -y jq` is ordinary work, and whatever follows sudo
 * is checked by every other rule (wrappers are stripped). What is blocked is
 * changing who may do what: the sudoers, passwd, shadow and group files, PAM,
 * setuid bits and capabilities, membership of admin groups, passwords.
 */
const AUTH_FILES = String.raw`/etc/(?:sudoers(?:\.d(?:/[\w.-]{0,64})?)?|passwd-?|shadow-?|group-?|gshadow-?|security/[\w.-]{1,64}|pam\.d(?:/[\w.-]{0,64})?|pam\.conf|login\.defs|doas\.conf)`

export const PRIVILEGE_RULES: WafRule[] = [
  rule({
    id: 'priv.write-auth-files',
    pattern: writes(AUTH_FILES),
    flags: 'm',
    category: 'privilege_escalation',
    description: 'modifies sudoers, passwd, shadow, group or PAM configuration: that grants or removes privileges on the machine',
    applies_to: ['command'],
  }),
  rule({
    id: 'priv.write-auth-files-path',
    pattern: String.raw`^${AUTH_FILES}$`,
    category: 'privilege_escalation',
    description: 'a tool writes sudoers, passwd, shadow, group or PAM configuration: that grants or removes privileges on the machine',
    applies_to: ['write_path'],
  }),
  rule({
    id: 'priv.edit-auth-db',
    pattern: String.raw`^(?:visudo|vipw|vigr|pwck -s|grpck -s)\b`,
    flags: 'm',
    category: 'privilege_escalation',
    description: 'edits the sudoers or account databases',
    applies_to: ['command'],
  }),
  rule({
    id: 'priv.setuid',
    pattern: String.raw`^chmod(?: -\S+){0,6} (?:\S{0,16},)?(?:[go]{0,2}[ua][ugoa]{0,3})?[+=][rwxXt]{0,5}s[rwxXtugo]{0,5}(?:,\S{0,16})? \S|^chmod(?: -\S+){0,6} 0?[4-7][0-7]{3} \S|^setcap\b[^\n]{0,200}?cap_(?:setuid|setgid|sys_admin|dac_override|dac_read_search|sys_ptrace|sys_module|chown|fowner)\b`,
    flags: 'mi',
    category: 'privilege_escalation',
    description: 'sets the setuid bit or grants a root capability: the file then runs with elevated privileges for anyone',
    applies_to: ['command'],
  }),
  rule({
    id: 'priv.admin-group',
    pattern: String.raw`^(?:usermod|useradd|adduser|gpasswd|addgroup)\b[^\n]{0,200}? (?:\S{0,64},)?(?:sudo|wheel|root|admin|adm|docker|lxd|disk|shadow)(?=[\s,]|$)|^(?:usermod|useradd)\b[^\n]{0,200}? (?:-u|--uid) ?0${END}|^(?:usermod|useradd)\b[^\n]{0,200}? (?:-o|--non-unique)${END}`,
    flags: 'm',
    category: 'privilege_escalation',
    description: 'adds a user to an administrative group (sudo, wheel, docker…) or gives it uid 0',
    applies_to: ['command'],
  }),
  rule({
    id: 'priv.change-password',
    pattern: String.raw`^chpasswd\b|^passwd\b[^\n]{0,60}? (?:root|-d|--delete|-u|--unlock|--stdin)${END}`,
    flags: 'm',
    category: 'privilege_escalation',
    description: 'sets, deletes or unlocks an account password',
    applies_to: ['command'],
  }),
  rule({
    id: 'priv.nopasswd-all',
    pattern: String.raw`\bNOPASSWD:\s{0,4}ALL\b`,
    category: 'privilege_escalation',
    description: 'a sudoers line granting passwordless root for every command',
    applies_to: ['command_text'],
  }),
  rule({
    id: 'priv.pkexec',
    pattern: String.raw`^pkexec\b(?! --version${END})(?! --help${END})`,
    flags: 'm',
    category: 'privilege_escalation',
    description: 'runs a program as root through polkit (pkexec); no coding task needs it and it is a classic local root exploit path',
    applies_to: ['command'],
  }),
  rule({
    id: 'priv.sudo-password-stdin',
    pattern: String.raw`^(?:sudo|doas)(?= )(?:(?: -[a-zA-Z]{0,8}S[a-zA-Z]{0,8}| --stdin)(?= |$))|\| (?:sudo|doas)(?: -\S+){0,4} -[a-zA-Z]{0,8}S|^su\b[^\n]{0,100}? <<<? `,
    flags: 'm',
    category: 'privilege_escalation',
    description: 'feeds a password to sudo or su from a pipe or a string: guessing or using a password the agent was never given',
    applies_to: ['command'],
  }),
  rule({
    id: 'priv.sudo-preload',
    pattern: String.raw`^(?:sudo|doas)\b[^\n]{0,200}? (?:LD_PRELOAD|LD_LIBRARY_PATH|LD_AUDIT|PYTHONPATH|PERL5OPT|BASH_ENV)=|^sudo\b[^\n]{0,200}? --preserve-env=[^\n]{0,100}?\b(?:LD_PRELOAD|LD_LIBRARY_PATH|BASH_ENV)\b`,
    flags: 'm',
    category: 'privilege_escalation',
    description: 'hands a library or startup-code variable (LD_PRELOAD, BASH_ENV…) to a root program: code injection as root',
    applies_to: ['command'],
  }),
  rule({
    id: 'priv.root-shell',
    pattern: String.raw`^(?:sudo|doas)(?: -[a-zA-Z]{0,6}[is][a-zA-Z]{0,6}){1,4}$|^(?:sudo|doas)(?: -\S+){0,3} (?:su|${SHELL})(?: -[a-zA-Z-]{0,12}){0,3}$|^su(?: -\S*){0,3}(?: root)?(?: -\S*){0,3}$`,
    flags: 'm',
    level: 'warn',
    category: 'privilege_escalation',
    description: 'opens an interactive root shell: anything typed into it later is out of the WAF’s sight (a shell without a terminal usually exits at once)',
    applies_to: ['command'],
  }),
]
