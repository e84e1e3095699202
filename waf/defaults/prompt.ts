import type { WafRule } from '../rule.ts'
import { ASK, METADATA, rule } from './fragments.ts'

/**
 * The prompt rule set, deliberately narrow: a prompt is blocked only for an
 * explicit instruction (an imperative that starts a clause) to do something
 * dangerous — open a reverse shell, send or print the user's secrets, mine
 * crypto, wipe the disk, escalate to root or escape the sandbox, run a fork
 * bomb, switch off host security, bypass the WAF. Talking about those things
 * ("explain how a reverse shell works", "why is `:(){ :|:& };:` a fork bomb?")
 * passes. Commands a prompt asks to run are also checked with the command
 * rules (prompt-commands.ts); every tool call is checked anyway.
 */
const SECRET_WORDS = String.raw`(?:~/\.ssh\S{0,64}|\.ssh/id_\S{0,32}|id_(?:rsa|dsa|ecdsa|ed25519)\b(?!\.pub)|(?:ssh|private|gpg|pgp|signing)\s(?:private\s)?keys?|(?:aws|gcp|azure|cloud)\s(?:credentials|secrets?|keys?|access\skeys?)|\.aws/credentials|/etc/shadow|password\shashes|(?:the\s)?\.env(?:\sfiles?)?|(?:all\s)?(?:the\s)?environment\svariables|env\svars|(?:all\s)?(?:the\s|our\s|my\s)?(?:api\skeys|secrets|tokens|credentials))`
const DESTINATION = String.raw`(?:https?://\S{1,256}|\d{1,3}(?:\.\d{1,3}){3}|pastebin|transfer\.sh|webhook\.site|(?:a|an|my|our|this|that|some)\s(?:remote|external|personal|private|own|attacker'?s?|c2)\s(?:server|host|machine|bucket|endpoint)|(?:my|our)\s(?:server|host|machine|bucket|email|inbox|discord|telegram)|[\w.+-]{1,64}@[\w-]{1,63}(?:\.[\w-]{1,63}){1,4}|[\w.-]{1,100}\.(?:com|net|org|io|sh|xyz|ru|cn|site|me|st|cc|tk|top|info|biz)\b)`
const STRONG_SECRET = String.raw`(?:~/\.ssh/id_[\w-]{1,64}(?![\w.-])|\.ssh/id_[\w-]{1,64}(?![\w.-])|(?:(?:my|your|the\suser'?s|the\shost'?s|the\sserver'?s|root'?s)\s)?(?:private\sssh|ssh\sprivate)\skeys?|~/\.aws/credentials|\.aws/credentials|aws\ssecret(?:\saccess)?\skeys?|/etc/g?shadow\b|password\shashes|/proc/\S{1,16}/environ|service\s?account\stokens?|/var/run/secrets\S{0,128})`

export const PROMPT_RULES: WafRule[] = [
  rule({
    id: 'prompt.reverse-shell',
    pattern: String.raw`${ASK}(?:open|spawn|start|create|give\sme|set\sup|setup|establish|get|launch|run|pop|drop)\s(?:me\s)?(?:an?\s)?(?:reverse|bind|back-?connect)[\s-]{0,2}(?:tcp\s)?shell\b(?!\s{0,2}(?:detect|scanner|signature|rule|test|check|filter|pattern|blocker|classifier|example))`,
    flags: 'i',
    category: 'reverse_shell',
    description: 'the prompt asks for a reverse or bind shell',
    applies_to: ['prompt'],
  }),
  rule({
    id: 'prompt.exfiltrate',
    pattern: String.raw`${ASK}(?:send|upload|post|exfiltrate|exfil|leak|paste|transfer|e-?mail|forward|ship|smuggle|beam|pipe|curl)\s[^\n]{0,80}?${SECRET_WORDS}[^\n]{0,80}?\b(?:to|into|onto)\s${DESTINATION}`,
    flags: 'i',
    category: 'exfiltration',
    description: 'the prompt asks to send secrets (keys, credentials, the environment) to an outside destination',
    applies_to: ['prompt'],
  }),
  rule({
    id: 'prompt.read-secrets',
    pattern: String.raw`${ASK}(?:(?:show|print|cat|display|read|dump|output|reveal|give|tell|list|paste|copy|echo|leak|extract)\s(?:me\s)?(?:(?:the|my|your|our|all|every|contents?\sof|content\sof|the\scontents?\sof)\s){0,3}${STRONG_SECRET}|(?:steal|harvest|exfiltrate|exfil)\s[^\n]{0,40}?(?:credentials|secrets|passwords|password\shashes|tokens|api\skeys|ssh\skeys|cookies|private\skeys))`,
    flags: 'i',
    category: 'credential_theft',
    description: 'the prompt asks to reveal or steal the user’s or the machine’s credentials',
    applies_to: ['prompt'],
  }),
  rule({
    id: 'prompt.cloud-metadata',
    pattern: String.raw`${ASK}(?:fetch|get|curl|wget|query|hit|call|request|access|read|dump|grab|retrieve)\b[^\n]{0,80}?${METADATA}`,
    flags: 'i',
    category: 'credential_theft',
    description: 'the prompt asks to query the cloud metadata service, which hands out the machine’s credentials',
    applies_to: ['prompt'],
  }),
  rule({
    id: 'prompt.crypto-mining',
    pattern: String.raw`${ASK}(?:(?:install|download|run|start|set\sup|setup|deploy|launch|compile|build)\s(?:an?\s|the\s)?(?:xmrig|xmr-stak|cpuminer|cgminer|ethminer|nbminer|lolminer|(?:crypto(?:currency)?|coin|bitcoin|monero|xmr|ethereum)[\s-]?miner)|mine\s(?:some\s)?(?:crypto(?:currency)?|bitcoin|monero|xmr|ethereum|eth|coins?|dogecoin|litecoin)\b)`,
    flags: 'i',
    category: 'crypto_mining',
    description: 'the prompt asks to mine cryptocurrency or install a miner',
    applies_to: ['prompt'],
  }),
  rule({
    id: 'prompt.wipe-system',
    pattern: String.raw`${ASK}(?:delete|wipe|erase|destroy|format|nuke|remove|trash|shred|overwrite|zero(?:\sout)?)\s(?:(?:everything|all(?:\sthe)?\sfiles|all\sdata)\s(?:on|in|from|under)\s(?:the\s|this\s|my\s)?(?:root(?:\sfile\s?system|\spartition|\sdrive|\sdirectory\s\(/\))|(?:whole|entire)\s(?:disk|drive|machine|server|system|computer|host|file\s?system)|disk|drive|hard\sdrive|machine|server|computer|host|system|/(?=[\s.,!]|$))|(?:the\s|this\s|my\s)?(?:whole\s|entire\s)?(?:root\sfile\s?system|hard\s(?:disk|drive)|boot\s(?:disk|drive|partition|sector)|(?:system|host|server)\s(?:disk|drive)|disk|drive|file\s?system|operating\s+system|machine|server|system)(?=\s{0,4}(?:$|[.,!;]|\s(?:now|completely|entirely|permanently|please|for\sme))))`,
    flags: 'im',
    category: 'filesystem_destruction',
    description: 'the prompt asks to wipe the disk, the filesystem or the machine',
    applies_to: ['prompt'],
  }),
  rule({
    id: 'prompt.escalate',
    pattern: String.raw`${ASK}(?:(?:escalate|elevate)\s(?:your\s|my\s|our\s|the\s)?(?:privileges?|permissions|access)(?:\sto\sroot)?|(?:get|gain|obtain|acquire)\sroot(?:\s(?:access|privileges|shell))?\s(?:on|to)\s(?:the\s|this\s)?(?:host|machine|server|box|system)|(?:break|escape)\sout\sof\s(?:the\s|this\s|your\s)?(?:sandbox|container|jail|vm)|escape\s(?:the\s|this\s|your\s)?(?:sandbox|container|jail))\b`,
    flags: 'i',
    category: 'privilege_escalation',
    description: 'the prompt asks to escalate privileges or escape the sandbox',
    applies_to: ['prompt'],
  }),
  rule({
    id: 'prompt.fork-bomb',
    pattern: String.raw`${ASK}(?:run|launch|start|execute|create\sand\srun|write\sand\srun|unleash|set\soff|detonate)\s(?:a\s|the\s)?fork[\s-]?bomb\b`,
    flags: 'i',
    category: 'resource_exhaustion',
    description: 'the prompt asks to run a fork bomb',
    applies_to: ['prompt'],
  }),
  rule({
    id: 'prompt.disable-security',
    pattern: String.raw`${ASK}(?:(?:disable|turn\soff|stop|flush|kill|uninstall)\s(?:the\s)?(?:host\s)?(?:firewall|selinux|apparmor|iptables|auditd|audit\slogging|antivirus|edr|falco|security\smonitoring)(?=\s{0,4}(?:$|[.,!;]|\s(?:now|completely|entirely|on\s(?:this|the)\s(?:host|machine|server)|for\sme)))|cover\s(?:your|our|my|the)\stracks|(?:wipe|clear|delete|erase|truncate|shred)\s(?:the\s|all\s(?:the\s)?)?(?:system\s|auth\s|audit\s)?logs?\s(?:in|under|from)\s/var/log|(?:bypass|disable|evade|get\saround|circumvent)\s(?:the\s|this\s|your\s)?(?:waf|guardrails|security\s(?:filter|checks|rules)|safety\s(?:filter|checks|rules)))`,
    flags: 'im',
    category: 'security_tampering',
    description: 'the prompt asks to switch off host security, erase the audit trail or bypass the WAF',
    applies_to: ['prompt'],
  }),
]
