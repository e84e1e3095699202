import type { WafRule } from '../rule.ts'
import { END, rule, writes } from './fragments.ts'

/**
 * The machine itself: kernel modules and parameters, the boot chain, power,
 * killing every process, fork bombs and crypto-miners. None of this is coding
 * work inside a sandbox, and each can take the host (and every other session
 * on it) down.
 */
const BOOT_FILES = String.raw`(?:/boot(?:/\S{0,256})?|/etc/default/grub(?:\.d/\S{1,64})?|/etc/grub\.d/\S{1,64}|/etc/fstab|/etc/crypttab|/etc/mkinitcpio\.conf|/etc/initramfs-tools/\S{1,64})`
const KERNEL_FILES = String.raw`(?:/proc/sys(?:rq-trigger|/\S{1,256})|/sys/\S{1,256}|/proc/\d{1,10}/(?:mem|oom_adj|oom_score_adj)|/proc/kcore)`

export const SYSTEM_RULES: WafRule[] = [
  rule({
    id: 'kernel.modules',
    pattern: String.raw`^(?:insmod|rmmod|modprobe|kexec)\b(?![^\n]{0,100}? (?:-n|--dry-run|--show-depends|-c|--showconfig|--help|--version)${END})`,
    flags: 'm',
    category: 'kernel_tampering',
    description: 'loads or removes a kernel module (or boots another kernel): code in the kernel controls the whole host',
    applies_to: ['command'],
  }),
  rule({
    id: 'kernel.sysctl-write',
    pattern: String.raw`^sysctl\b(?=[^\n]{0,200}? (?:-w|--write|-p|--load|--system|[\w./-]{1,128}=\S{0,64})${END})`,
    flags: 'm',
    category: 'kernel_tampering',
    description: 'changes kernel parameters for the whole host',
    applies_to: ['command'],
  }),
  rule({
    id: 'kernel.write-proc-sys',
    pattern: String.raw`(?:^| )[\d&]?>[>|]? ${KERNEL_FILES}|^(?:tee|dd|cp)\b[^\n]{0,300}?(?: |of=)${KERNEL_FILES}`,
    flags: 'm',
    category: 'kernel_tampering',
    description: 'writes kernel settings or triggers through /proc/sys, /proc/sysrq-trigger or /sys',
    applies_to: ['command'],
  }),
  rule({
    id: 'kernel.write-proc-sys-path',
    pattern: String.raw`^${KERNEL_FILES}$`,
    category: 'kernel_tampering',
    description: 'a tool writes kernel settings or triggers through /proc/sys, /proc/sysrq-trigger or /sys',
    applies_to: ['write_path'],
  }),
  rule({
    id: 'kernel.raw-memory',
    pattern: String.raw`(?<![\w/.-])/dev/(?:mem|kmem|port)(?![\w/.-])|/proc/kcore\b`,
    flags: 'm',
    category: 'kernel_tampering',
    description: 'reads or writes physical or kernel memory',
    applies_to: ['command', 'read_path', 'write_path'],
  }),
  rule({
    id: 'boot.write-files',
    pattern: writes(BOOT_FILES),
    flags: 'm',
    category: 'boot_tampering',
    description: 'modifies the boot partition, the bootloader configuration or fstab: the machine may not boot again',
    applies_to: ['command'],
  }),
  rule({
    id: 'boot.write-files-path',
    pattern: String.raw`^${BOOT_FILES}$`,
    category: 'boot_tampering',
    description: 'a tool modifies the boot partition, the bootloader configuration or fstab: the machine may not boot again',
    applies_to: ['write_path'],
  }),
  rule({
    id: 'boot.tools',
    pattern: String.raw`^(?:grub2?-install|grub2?-mkconfig|update-grub2?|grub2?-set-default|grubby|bootctl (?:install|remove|update)|update-initramfs|dracut|mkinitcpio|efibootmgr(?=[^\n]{0,100}? (?:-B|--delete-bootnum|-c|--create|-o|--bootorder|-b)${END}))${END}`,
    flags: 'm',
    category: 'boot_tampering',
    description: 'rewrites the bootloader, boot entries or initramfs',
    applies_to: ['command'],
  }),
  rule({
    id: 'dos.power',
    pattern: String.raw`^(?:shutdown|reboot|halt|poweroff)(?=$| -| now\b| \+\d| \d{1,2}:\d{2})|^(?:init|telinit) [06sS]${END}|^systemctl (?:poweroff|reboot|halt|kexec|suspend|hibernate|emergency|rescue|soft-reboot)${END}|^systemctl isolate (?:rescue|emergency|poweroff|reboot|halt)\b`,
    flags: 'm',
    category: 'denial_of_service',
    description: 'shuts down or reboots the host, ending every session on it',
    applies_to: ['command'],
  }),
  rule({
    id: 'dos.kill-everything',
    pattern: String.raw`^kill(?: -s \S+| -\S+){0,2}(?: --)? -1$|^kill(?: \S+){0,4}? 1$|^killall5\b|^(?:pkill|killall|skill|slay)\b[^\n]{0,200}? (?:-u|--user|--euid|-U|--uid)${END}|^pkill(?: -\S+){0,6} (?:\.\*?|\.\+|\^|\*|"")$|^killall\b[^\n]{0,100}? (?:-r|--regexp) (?:\.\*?|\.\+|\^|\*|"")${END}`,
    flags: 'm',
    category: 'denial_of_service',
    description: 'kills every process (kill -1), init (pid 1) or every process of a user, including the runner',
    applies_to: ['command'],
  }),
  rule({
    id: 'dos.kill-node',
    pattern: String.raw`^(?:pkill|killall)(?: -\S+){0,4} (?:node|nodejs|claude)$`,
    flags: 'm',
    level: 'warn',
    category: 'denial_of_service',
    description: 'kills every Node.js process, which includes the agent CLI itself and possibly the runner',
    applies_to: ['command'],
  }),
  rule({
    id: 'res.fork-bomb',
    pattern: String.raw`([\w:.-]{1,40})\s{0,4}\(\)\s{0,4}\{[^}]{0,40}?\1\s{0,4}[|&][^}]{0,20}?\1\s{0,4}&|\bfunction\s([\w:.-]{1,40})\s{0,4}(?:\(\))?\s{0,4}\{[^}]{0,40}?\2\s{0,4}[|&][^}]{0,20}?\2\s{0,4}&|\bfork\s{1,4}while\s{1,4}fork\b|\bwhile\s{0,4}\(\s{0,4}1\s{0,4}\)\s{0,4}\{?\s{0,4}fork\b|\bwhile\s{1,4}(?:True|1)\s{0,4}:\s{0,8}(?:os\.)?fork\(\)|\bloop\s{0,4}\{\s{0,4}fork\b|\bwhile\s{1,4}(?:true|:|1)\s{0,4};\s{0,4}do\s[^;\n]{0,40}&\s{0,4}done\b|%0\|%0`,
    category: 'resource_exhaustion',
    description: 'a fork bomb: processes multiply until the host stops responding',
    applies_to: ['command_text'],
  }),
  rule({
    id: 'mine.crypto-miner',
    pattern: String.raw`(?:^|[\s/;|&'"(])(?:xmrig|xmr-stak(?:-\w{1,8})?|minerd|cpuminer(?:-\w{1,8})?|cgminer|bfgminer|ethminer|nbminer|lolminer|phoenixminer|nanominer|teamredminer|gminer|srbminer(?:-multi)?)(?=[\s/.;|&'")-]|$)|stratum\+(?:tcp|ssl|tls)://|--donate-level\b|\b(?:pool\.minexmr\.com|xmrpool\.eu|supportxmr\.com|moneroocean\.stream|hashvault\.pro|nanopool\.org|2miners\.com|f2pool\.com|ethermine\.org|nicehash\.com|minergate\.com|c3pool\.com|herominers\.com|unmineable\.com)\b`,
    flags: 'im',
    category: 'crypto_mining',
    description: 'downloads or runs a cryptocurrency miner or talks to a mining pool',
    applies_to: ['command_text', 'url'],
  }),
]
