import { ClaudeEngine } from './claude/engine.ts'
import type { EngineConfig } from './config.ts'
import type { Engine } from './engine.ts'
import { DEFAULT_MAX_LINE_BYTES } from './line-splitter.ts'

/** The engine named by `engine.type`. */
export function createEngine(config: EngineConfig): Engine {
  switch (config.type) {
    case 'claude':
      return new ClaudeEngine({ ...config, maxLineBytes: DEFAULT_MAX_LINE_BYTES })
  }
}
