import { defineConfig } from 'vitest/config'

// Two projects: `unit` runs in seconds (pure logic, in-process bus, fake CLI);
// `e2e` drives real processes (NATS, the real Claude Code CLI, real clients).
// A third, `k8s`, exists only when KUBECONFIG names a real cluster: it installs
// the chart there (test/e2e/k8s-*.test.ts); without a cluster it is not a skip, it is absent.
export default defineConfig({
  test: {
    projects: [
      {
        extends: true,
        test: { name: 'unit', include: ['test/**/*.test.ts'], exclude: ['test/e2e/**'] },
      },
      {
        extends: true,
        test: { name: 'e2e', include: ['test/e2e/**/*.test.ts'], exclude: ['test/e2e/k8s-*.test.ts'], testTimeout: 60_000, hookTimeout: 60_000 },
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
