import type { Engine } from '../runner/engine/engine.ts'
import type { Metrics } from './metrics.ts'

/**
 * The engine with session metrics: a session is active on a runner while its
 * agent CLI process runs. Every way a process ends (turn done and reaped when
 * idle, stop, close, crash, runner shutdown) passes through its `exited`, so
 * the gauge comes down whatever ended it.
 */
export function meterEngine(engine: Engine, metrics: Metrics): Engine {
  return {
    name: engine.name,
    version: () => engine.version(),
    async start(options, handlers) {
      const process = await engine.start(options, handlers)
      metrics.sessionStarted(options.resume)
      const ended = () => metrics.sessionEnded()
      void process.exited.then(ended, ended)
      return process
    },
  }
}
