import type { WafRule } from '../rule.ts'
import { DISK, END, HOME, rule, writes } from './fragments.ts'

/**
 * Turning off what watches or confines the agent (firewall, SELinux/AppArmor,
 * audit, logs, the CLI's own settings), staying on the machine after the
 * session (authorized_keys, cron, services, preload), getting out of the
 * container, and rewriting shared git history.
 */
const SECURITY_SERVICE = String.raw`(?:firewalld|ufw|iptables|ip6tables|nftables|netfilter-persistent|apparmor|auditd|falco|falco-modern-bpf|osqueryd|wazuh-agent|ossec|falcon-sensor|crowdstrike|clamav-daemon|clamav-freshclam|clamd|sysdig|tetragon|fail2ban|rsyslog|syslog|syslog-ng|systemd-journald|aide|tripwire|selinux)(?:\.service)?`
const LOGS = String.raw`/var/log(?:/(?:auth\.log|syslog|secure|messages|kern\.log|audit(?:/\S{0,64})?|wtmp|btmp|lastlog|faillog|journal(?:/\S{0,128})?|\*))?/?`
const PERSISTENCE_FILES = String.raw`(?:${HOME}/\.ssh/authorized_keys2?|/etc/ssh/sshd_config(?:\.d/[\w.-]{1,64})?|/etc/crontab|/etc/cron\.(?:d|hourly|daily|weekly|monthly|allow|deny)(?:/[\w.-]{0,64})?|/var/spool/cron(?:/[\w.-]{1,64}){0,2}|/etc/rc\.local|/etc/init\.d/[\w.-]{1,64}|/etc/profile(?:\.d/[\w.-]{0,64})?|/etc/bash\.bashrc|/etc/zsh/zshrc|/etc/environment|/etc/ld\.so\.preload|/etc/ld\.so\.conf(?:\.d/[\w.-]{0,64})?|/etc/systemd/system/[\w.@-]{1,128}(?:\.d/[\w.-]{1,64})?|/(?:usr/)?lib/systemd/system/[\w.@-]{1,128}|/etc/update-motd\.d/[\w.-]{1,64}|/etc/xdg/autostart/[\w.-]{1,64}|${HOME}/(?:\.ssh/(?:rc|environment)|\.config/(?:systemd/user/[\w.@-]{1,128}(?:\.d/[\w.-]{1,64})?|autostart/[\w.-]{1,64})|\.local/share/systemd/user/[\w.@-]{1,128}|Library/Launch(?:Agents|Daemons)/[\w.-]{1,128})|/etc/ssh/sshrc|/Library/Launch(?:Agents|Daemons)/[\w.-]{1,128}|/etc/gitconfig)`
/** The user's shell startup files: they run in every later shell of the user. */
const SHELL_RC = String.raw`${HOME}/\.(?:bashrc|bash_profile|bash_login|bash_logout|profile|zshrc|zshenv|zprofile|zlogin|zlogout|kshrc|mkshrc|cshrc|tcshrc|config/fish/config\.fish|config/fish/conf\.d/[\w.-]{1,64})`
/** What turns a line in a startup file into a way back in or a trap: downloads, network shells, hidden or background code, hijacked commands. */
const RC_PAYLOAD = String.raw`(?:\b(?:curl|wget|nc|ncat|netcat|socat|telnet|base64|xxd|openssl|nohup|setsid|disown|crontab|python[\d.]{0,4} -c|perl -e|ruby -e|node -e)\b|/dev/tcp/|\b(?:ba)?sh -i\b|\balias (?:sudo|su|ssh|git|ls|cd|doas|passwd)=|\bPROMPT_COMMAND=|\bLD_PRELOAD=|\bLD_LIBRARY_PATH=|\btrap\b|\beval\b|\$\(|&(?: |$))`
/** Shell history files. */
const HISTORY_FILE = String.raw`(?:\S{0,128}/)?\.(?:bash_history|zsh_history|zhistory|sh_history|ash_history|history|python_history|psql_history|mysql_history|node_repl_history|sqlite_history|lesshst|viminfo)`
/** Claude Code settings: they can add hooks and permissions or disable hooks — including the WAF's own. */
const CLI_SETTINGS = String.raw`(?:(?:[\w.~/-]{0,256}/)?\.claude/settings(?:\.local)?\.json|${HOME}/\.claude\.json|/etc/claude-code/\S{1,64})`

export const TAMPERING_RULES: WafRule[] = [
  rule({
    id: 'sec.firewall',
    pattern: String.raw`^ip6?tables(?:-legacy|-nft)?\b[^\n]{0,200}? (?:-F|--flush|-X|--delete-chain|-P (?:INPUT|FORWARD|OUTPUT) ACCEPT|--policy (?:INPUT|FORWARD|OUTPUT) ACCEPT)${END}|^nft (?:flush ruleset|delete table)\b|^ufw (?:disable|--force reset|reset)\b`,
    flags: 'm',
    category: 'security_tampering',
    description: 'flushes or disables the host firewall',
    applies_to: ['command'],
  }),
  rule({
    id: 'sec.stop-security-service',
    pattern: String.raw`^(?:systemctl|service|rc-service|rc-update|chkconfig|update-rc\.d|launchctl)\b(?=[^\n]{0,120}? (?:stop|disable|mask|kill|off|del|remove|unload|bootout)${END})(?=[^\n]{0,120}? ${SECURITY_SERVICE}${END})`,
    flags: 'm',
    category: 'security_tampering',
    description: 'stops or disables a firewall, audit, logging or security-monitoring service',
    applies_to: ['command'],
  }),
  rule({
    id: 'sec.mac-off',
    pattern: String.raw`^setenforce (?:0|[Pp]ermissive)${END}|^(?:aa-teardown|aa-disable|aa-complain)\b|^apparmor_parser (?:-R|--remove)\b|^auditctl (?:-D|-e ?0)${END}`,
    flags: 'm',
    category: 'security_tampering',
    description: 'switches off SELinux/AppArmor enforcement or the audit rules',
    applies_to: ['command'],
  }),
  rule({
    id: 'sec.selinux-config',
    pattern: String.raw`\bSELINUX=(?:disabled|permissive)\b`,
    category: 'security_tampering',
    description: 'disables SELinux in its configuration',
    applies_to: ['command_text'],
  }),
  rule({
    id: 'forensics.history-file',
    pattern: String.raw`^(?:rm|shred|truncate|unlink|srm|wipe)\b[^\n]{0,300}? ${HISTORY_FILE}${END}|(?:^| )[\d&]?>\|? ${HISTORY_FILE}${END}|^(?:ln|cp|mv)\b[^\n]{0,100}? /dev/null ${HISTORY_FILE}${END}`,
    flags: 'm',
    category: 'anti_forensics',
    description: 'deletes, empties or redirects the user’s shell history file: destroys the record of what was run',
    applies_to: ['command'],
  }),
  rule({
    id: 'forensics.kernel-log',
    pattern: String.raw`^dmesg\b[^\n]{0,60}? (?:-[a-zA-Z]{0,4}[cC][a-zA-Z]{0,4}|--clear|--read-clear)${END}`,
    flags: 'm',
    category: 'anti_forensics',
    description: 'clears the kernel ring buffer (dmesg -c / -C)',
    applies_to: ['command'],
  }),
  rule({
    id: 'forensics.find-logs',
    pattern: String.raw`^find(?: -[HLPE]){0,3} /var/(?:log|audit|adm)\S{0,64}[^\n]{0,300}? (?:-delete|-exec(?:dir)? (?:rm|shred|truncate|unlink|srm))${END}`,
    flags: 'm',
    category: 'anti_forensics',
    description: 'deletes or truncates log files across /var/log',
    applies_to: ['command'],
  }),
  rule({
    id: 'forensics.login-records',
    pattern: String.raw`^(?:lastlog\b[^\n]{0,60}? (?:-C|--clear)|faillog\b[^\n]{0,60}? (?:-r|--reset)|utmpdump\b[^\n]{0,100}? (?:-r|--reverse)|pam_tally2?\b[^\n]{0,60}? (?:-r|--reset)|faillock\b[^\n]{0,60}? --reset)${END}`,
    flags: 'm',
    category: 'anti_forensics',
    description: 'clears or rewrites login and failed-login records',
    applies_to: ['command'],
  }),
  rule({
    id: 'forensics.timestomp',
    pattern: String.raw`^touch\b(?=[^\n]{0,200}? (?:-[a-zA-Z]{0,4}[dtr]|--date|--reference)(?:[ =]|$))[^\n]{0,300}? /(?:etc|usr|bin|sbin|lib\w{0,3}|boot|var/log|root)/\S`,
    flags: 'm',
    category: 'anti_forensics',
    description: 'back-dates a system file (touch -d / -r): hides when it was changed',
    applies_to: ['command'],
  }),
  rule({
    id: 'sec.wipe-logs',
    pattern: String.raw`^(?:rm|shred|truncate|unlink|srm|wipe)\b[^\n]{0,300}? ${LOGS}${END}|(?:^| )[\d&]?>[>|]? ${LOGS}${END}|^(?:tee|dd|cp|ln)\b[^\n]{0,300}?(?: |of=)${LOGS}${END}|^journalctl\b[^\n]{0,100}? --vacuum-(?:time|size|files)\b`,
    flags: 'm',
    category: 'anti_forensics',
    description: 'deletes or truncates system and audit logs: the audit trail of the machine',
    applies_to: ['command'],
  }),
  rule({
    id: 'sec.shell-history',
    pattern: String.raw`\bhistory -c\b|\bunset (?:[\w ]{0,40} )?HISTFILE\b|\bHISTFILE=/dev/null\b|\bHISTSIZE=0\b|\bset \+o history\b|/dev/null [^\n]{0,20}?\.(?:bash|zsh)_history\b|> ?\S{0,64}\.(?:bash|zsh)_history\b`,
    level: 'warn',
    category: 'anti_forensics',
    description: 'clears or disables shell history (no effect on the WAF’s record, but a sign of hiding tracks)',
    applies_to: ['command_text'],
  }),
  rule({
    id: 'sec.cli-settings',
    pattern: writes(CLI_SETTINGS),
    flags: 'm',
    category: 'security_tampering',
    description: 'modifies Claude Code settings, which can add hooks and permissions or disable hooks — the WAF’s own check included',
    applies_to: ['command'],
  }),
  rule({
    id: 'sec.cli-settings-path',
    pattern: String.raw`(?:^|/)\.claude/settings(?:\.local)?\.json$|^~/\.claude\.json$|^/etc/claude-code/`,
    category: 'security_tampering',
    description: 'a tool modifies Claude Code settings, which can add hooks and permissions or disable hooks — the WAF’s own check included',
    applies_to: ['write_path'],
  }),
  rule({
    id: 'persist.system-files',
    pattern: writes(PERSISTENCE_FILES),
    flags: 'm',
    category: 'persistence',
    description: 'installs a way back in or a program that outlives the session (authorized_keys, cron, services, profile, ld.so.preload)',
    applies_to: ['command'],
  }),
  rule({
    id: 'persist.system-files-path',
    pattern: String.raw`^${PERSISTENCE_FILES}$`,
    category: 'persistence',
    description: 'a tool installs a way back in or a program that outlives the session (authorized_keys, cron, services, profile, ld.so.preload)',
    applies_to: ['write_path'],
  }),
  rule({
    id: 'persist.shell-rc',
    pattern: String.raw`^(?:echo|printf|cat|tee)\b(?=[^\n]{0,400}?(?: [\d&]?>>?\|? | )${SHELL_RC}${END})(?=[^\n]{0,400}?${RC_PAYLOAD})|^(?:echo|printf|cat)\b[^\n]{0,400}?${RC_PAYLOAD}[^\n]{0,400}? \| tee(?: -a| --append)? ${SHELL_RC}${END}|^(?:cp|mv|ln|install|rsync|scp|curl|wget)\b[^\n]{0,300} (?:-o |-O |--output[ =])?${SHELL_RC}$`,
    flags: 'm',
    category: 'persistence',
    description:
      'puts a download, a network shell, background or hidden code, or a hijacked command into a shell startup file (or replaces the file): it runs in every later shell of the user',
    applies_to: ['command'],
  }),
  rule({
    id: 'persist.shell-rc-path',
    pattern: String.raw`^${SHELL_RC}$`,
    level: 'warn',
    category: 'persistence',
    description:
      'a tool writes a shell startup file of the user; allowed (adding to PATH is common) but reported, since whatever it holds runs in every later shell',
    applies_to: ['write_path'],
  }),
  rule({
    id: 'persist.scheduler',
    pattern: String.raw`^(?:at|batch)(?: -[a-zA-Z]{1,4}(?: \S+)?){0,3} (?:now|noon|midnight|teatime|tomorrow|\d{1,2}(?::\d{2})?(?:am|pm)?|\+)|\| (?:at|batch)\b(?! -[lrd]${END})|^systemd-run\b[^\n]{0,200}? (?:--on-(?:calendar|active|boot|startup|unit-active|unit-inactive)|--user|--unit|--scope|-p|--property|--remain-after-exit)\b|^loginctl enable-linger\b|^systemctl --user (?:enable|link|add-wants|add-requires|edit)\b|^launchctl (?:load|bootstrap|enable|submit)\b|^schtasks\b[^\n]{0,60}? /create\b`,
    flags: 'mi',
    category: 'persistence',
    description: 'schedules a job or installs a user service that runs after the session ends (at, systemd-run timers, user units, lingering, launchd)',
    applies_to: ['command'],
  }),
  rule({
    id: 'persist.git-hooks-config',
    pattern: String.raw`^git\b[^\n]{0,100}? config\b(?=[^\n]{0,200}? --(?:global|system)${END})[^\n]{0,200}? (?:core\.(?:hooksPath|fsmonitor|sshCommand|pager|editor|askPass|gitProxy)|init\.templateDir|sequence\.editor|diff\.external|credential\.helper !)(?:[ =]|$)|^git\b[^\n]{0,100}? config\b[^\n]{0,200}? core\.hooksPath[ =](?:/|~|\.\./|\$)|^git\b[^\n]{0,200}? (?:config\b[^\n]{0,200}? core\.fsmonitor |-c core\.fsmonitor=)(?!(?:true|false|yes|no|on|off|0|1)${END})\S|^git\b[^\n]{0,100}? -c (?:core\.hooksPath=(?:/|~|\.\./)|core\.sshCommand=|core\.pager=|credential\.helper=!)`,
    flags: 'm',
    category: 'persistence',
    description:
      'points git at hooks or helper commands outside the repository, or globally (core.hooksPath, core.fsmonitor, init.templateDir…): code that runs in every later git command of the user',
    applies_to: ['command'],
  }),
  rule({
    id: 'persist.git-hook-file',
    pattern: writes(String.raw`(?:[\w.~/-]{0,256}/)?\.git/hooks/[\w.-]{1,64}`),
    flags: 'm',
    level: 'warn',
    category: 'persistence',
    description: 'writes a git hook: it runs on later git commands, also the user’s own outside the session; allowed (setting up hooks is work) but reported',
    applies_to: ['command'],
  }),
  rule({
    id: 'persist.git-hook-file-path',
    pattern: String.raw`(?:^|/)\.git/hooks/[\w.-]{1,64}$`,
    level: 'warn',
    category: 'persistence',
    description: 'a tool writes a git hook: it runs on later git commands, also the user’s own outside the session; allowed but reported',
    applies_to: ['write_path'],
  }),
  rule({
    id: 'persist.crontab',
    pattern: String.raw`^crontab(?: -u \S+)?(?: -(?:r|ir)\b| -$| (?!-)[\w.~/-]{0,128}[./][\w.~/-]{0,128}${END})`,
    flags: 'm',
    category: 'persistence',
    description: 'installs or removes a crontab: jobs that run after the session ends',
    applies_to: ['command'],
  }),
  rule({
    id: 'ctr.privileged-container',
    pattern: String.raw`^(?:docker|podman|nerdctl)(?: container)? (?:run|create)\b[^\n]{0,400}? (?:--privileged(?:=true)?|(?:-v|--volume)[ =]/{1,2}(?=[:\s]|$)|(?:-v|--volume)[ =]/(?:var/)?run/(?:docker|containerd/containerd|crio/crio|podman/podman)\.sock|--mount[ =]\S{0,64}(?:source|src)=/(?=[,\s]|$)|--pid[ =]host|--userns[ =]host|--cap-add[ =](?:ALL|SYS_ADMIN|SYS_MODULE|SYS_PTRACE|DAC_READ_SEARCH)|--security-opt[ =](?:seccomp|apparmor)[=:]unconfined|--device[ =]/dev/(?:sd|nvme|mem|kmem))(?=[\s,:]|$)`,
    flags: 'm',
    category: 'container_escape',
    description: 'starts a container with host-level access (privileged, the host root or docker socket mounted, host PID namespace, dangerous capabilities)',
    applies_to: ['command'],
  }),
  rule({
    id: 'ctr.host-namespaces',
    pattern: String.raw`^nsenter\b[^\n]{0,200}? (?:-t ?1|--target[ =]1)${END}|--unix-socket[ =]/(?:var/)?run/(?:docker|containerd/containerd|crio/crio|podman/podman)\.sock|UNIX-CONNECT:/(?:var/)?run/docker\.sock|^mount\b[^\n]{0,200}? ${DISK}|^debugfs\b[^\n]{0,100}? ${DISK}`,
    flags: 'mi',
    category: 'container_escape',
    description: 'enters the host’s namespaces, drives the container runtime socket directly or mounts a host disk',
    applies_to: ['command'],
  }),
  rule({
    id: 'ctr.cgroup-escape',
    pattern: String.raw`\b(?:release_agent|notify_on_release|core_pattern)\b`,
    category: 'container_escape',
    description: 'touches cgroup release_agent or core_pattern, the classic ways to run code on the host from a container',
    applies_to: ['command_text'],
  }),
  rule({
    id: 'git.rewrite-shared-branch',
    pattern: String.raw`^git(?: -C \S+)? push\b(?=[^\n]{0,300}? (?:-f|--force|--mirror|-d|--delete)${END}|[^\n]{0,300}? [+:]\S)(?=[^\n]{0,300}?(?: --mirror${END}|[ :+](?:HEAD:)?(?:refs/heads/)?(?:main|master|trunk|develop|production|prod)${END}))`,
    flags: 'm',
    level: 'warn',
    category: 'source_control',
    description:
      'force-pushes, deletes or mirrors over a shared default branch; allowed (branch protection on the server is the authority, and --force-with-lease or a feature branch are normal work) but reported',
    applies_to: ['command'],
  }),
]
