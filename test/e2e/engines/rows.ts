import { claudeAcpRow } from './claude-acp.ts'
import { claudeRow } from './claude.ts'
import { codexAcpRow } from './codex-acp.ts'
import { codexRow } from './codex.ts'
import { geminiRow } from './gemini.ts'
import { opencodeRow } from './opencode.ts'
import type { EngineRow } from './row.ts'

/** Every engine the conformance suite runs: one row per adapter and agent CLI. */
export const ENGINE_ROWS: EngineRow[] = [claudeRow, codexRow, opencodeRow, geminiRow, claudeAcpRow, codexAcpRow]
