import type { WafRule } from '../rule.ts'
import { DISK, END, ROOT_HOME_OR_SYSTEM, ROOT_OR_SYSTEM, rule } from './fragments.ts'

/**
 * Destroying the filesystem. Deleting inside the sandbox is normal work
 * (`rm -rf build/*`, `rm -rf node_modules dist`, `find . -name '*.tmp' -delete`);
 * what is blocked is aiming at the root, a home directory, the sandbox's
 * parent, a system directory or a block device.
 */
export const FILESYSTEM_RULES: WafRule[] = [
  rule({
    id: 'fs.rm-root',
    pattern: String.raw`^(?:rm|rimraf|trash-put)(?: \S+){0,32}? ${ROOT_HOME_OR_SYSTEM}`,
    flags: 'm',
    category: 'filesystem_destruction',
    description: 'deletes the filesystem root, a home directory, the parent of the sandbox or a system directory',
    applies_to: ['command'],
  }),
  rule({
    id: 'fs.no-preserve-root',
    pattern: String.raw`^rm\b[^\n]{0,400}? --no-preserve-root${END}`,
    flags: 'm',
    category: 'filesystem_destruction',
    description: 'rm --no-preserve-root exists only to allow deleting /',
    applies_to: ['command'],
  }),
  rule({
    id: 'fs.find-delete-root',
    pattern: String.raw`^find(?: -[HLPE]){0,3} ${ROOT_HOME_OR_SYSTEM}[^\n]{0,400}? (?:-delete|-exec(?:dir)? (?:rm|shred|unlink))${END}`,
    flags: 'm',
    category: 'filesystem_destruction',
    description: 'find … -delete / -exec rm from the root, a home directory or a system directory deletes across the whole machine',
    applies_to: ['command'],
  }),
  rule({
    id: 'fs.move-root',
    pattern: String.raw`^mv(?: \S+){0,32}? ${ROOT_HOME_OR_SYSTEM}(?= \S)`,
    flags: 'm',
    category: 'filesystem_destruction',
    description: 'moving the root, a home directory or a system directory away breaks the machine as surely as deleting it',
    applies_to: ['command'],
  }),
  rule({
    id: 'fs.rsync-delete-root',
    pattern: String.raw`^rsync\b(?=[^\n]{0,400}? --delete)[^\n]{0,400} ${ROOT_HOME_OR_SYSTEM}$`,
    flags: 'm',
    category: 'filesystem_destruction',
    description: 'rsync --delete into the root, a home directory or a system directory erases everything not in the source',
    applies_to: ['command'],
  }),
  rule({
    id: 'fs.chmod-root',
    pattern: String.raw`^(?:chmod|chown|chgrp|chattr|setfacl)(?: \S+){0,32}? ${ROOT_OR_SYSTEM}`,
    flags: 'm',
    category: 'filesystem_destruction',
    description: 'changing the owner or mode of / or a system directory (chmod -R 777 /, chown -R …) breaks the system and its security',
    applies_to: ['command'],
  }),
  rule({
    id: 'fs.wipe-device',
    pattern: String.raw`^(?:shred|wipefs|blkdiscard|mkfs(?:\.\w{1,10})?|mke2fs|mkswap|mkdosfs|mkntfs|sgdisk|sfdisk|parted|fdisk|gdisk|cfdisk|cryptsetup|dd|cp|tee|pv|install|ddrescue)\b(?![^\n]{0,200}? (?:-l|--list)${END})[^\n]{0,300}?(?: |of=)${DISK}`,
    flags: 'm',
    category: 'filesystem_destruction',
    description: 'formats, partitions, shreds or overwrites a block device: every file on the disk is lost',
    applies_to: ['command'],
  }),
  rule({
    id: 'fs.redirect-to-device',
    pattern: String.raw`(?:^| )[\d&]?>[>|]? ${DISK}`,
    flags: 'm',
    category: 'filesystem_destruction',
    description: 'writing into a block device (> /dev/sda) overwrites the disk under the filesystem',
    applies_to: ['command'],
  }),
]
