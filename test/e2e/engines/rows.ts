import { claudeRow } from './claude.ts'
import { codexRow } from './codex.ts'
import type { EngineRow } from './row.ts'

/** Every engine the conformance suite runs: one row per adapter and agent CLI. */
export const ENGINE_ROWS: EngineRow[] = [claudeRow, codexRow]
