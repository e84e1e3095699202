import { AcpEngine } from './acp/engine.ts'
import { ClaudeEngine } from './claude/engine.ts'
import { CodexEngine } from './codex/engine.ts'
import type { NamedEngine } from './config.ts'
import type { Engine } from './engine.ts'
import { DEFAULT_MAX_LINE_BYTES } from './line-splitter.ts'
import { OpenCodeEngine } from './opencode/engine.ts'

/** The adapter of one configured engine, by its `type`. */
export function createEngine(config: NamedEngine): Engine {
  switch (config.type) {
    case 'claude':
      return new ClaudeEngine({ ...config, maxLineBytes: DEFAULT_MAX_LINE_BYTES })
    case 'codex':
      return new CodexEngine({ ...config, maxLineBytes: DEFAULT_MAX_LINE_BYTES })
    case 'opencode':
      return new OpenCodeEngine({ ...config, maxLineBytes: DEFAULT_MAX_LINE_BYTES })
    case 'acp':
      return new AcpEngine({ ...config, maxLineBytes: DEFAULT_MAX_LINE_BYTES })
  }
}
