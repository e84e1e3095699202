import { defineConfig } from 'vitest/config'

// Projects: `unit` (`npm run test:fast`: no child process and no server
// outside the test's own process, so it runs in seconds; its setup file
// test/fixtures/unit-tier.ts fails a test that starts one; its files share one
// module graph per worker, which halves its time, so a file that changes global
// state, fake timers say, puts it back), `integration`
// (`*.integration.test.ts`, in the folder of the unit tests of the same module:
// NATS servers, the fake CLI, bwrap, helm, other child processes) and `e2e`
// (real processes: NATS, the real Claude Code CLI, real clients) run side by side;
// then `load`, the load-and-fault tests, one file at a time on a machine left
// to them: they measure what load does, so they must not be each other's load.
// A third, `k8s`, exists only when KUBECONFIG names a real cluster: it installs
// the chart there (test/e2e/k8s-*.test.ts); without a cluster it is not a skip, it is absent.
const LOAD_TESTS = ['test/e2e/load.test.ts', 'test/e2e/faults.test.ts', 'test/e2e/runner-freeze.test.ts', 'test/e2e/many-reaps.test.ts', 'test/e2e/ws-slow-reader-memory.test.ts']

export default defineConfig({
  test: {
    projects: [
      {
        extends: true,
        test: { name: 'unit', include: ['test/**/*.test.ts'], exclude: ['test/e2e/**', '**/*.integration.test.ts'], setupFiles: ['test/fixtures/unit-tier.ts'], isolate: false },
      },
      {
        extends: true,
        test: { name: 'integration', include: ['test/**/*.integration.test.ts'], exclude: ['test/e2e/**'] },
      },
      {
        extends: true,
        test: { name: 'e2e', include: ['test/e2e/**/*.test.ts'], exclude: ['test/e2e/k8s-*.test.ts', ...LOAD_TESTS], testTimeout: 60_000, hookTimeout: 60_000 },
      },
      {
        extends: true,
        test: { name: 'load', include: LOAD_TESTS, fileParallelism: false, sequence: { groupOrder: 1 }, testTimeout: 60_000, hookTimeout: 60_000 },
      },
      ...(process.env.KUBECONFIG
        ? [{ extends: true, test: { name: 'k8s', include: ['test/e2e/k8s-*.test.ts'], testTimeout: 600_000, hookTimeout: 600_000 } }]
        : []),
    ],
    testTimeout: 20_000,
    hookTimeout: 20_000,
    pool: 'forks',
    // In CI a JSON report too, from which .ci/run prints a plain "N passed, N failed" line.
    reporters: process.env.CI ? ['default', ['json', { outputFile: 'test-results.json' }]] : ['default'],
  },
})
