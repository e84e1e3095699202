import { existsSync } from 'node:fs'
import path from 'node:path'
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
// `k8s` runs the chart and the controller against a real API server that its
// global setup starts on loopback (scripts/kube-local.sh: etcd, kube-apiserver,
// kwok; test/kube-local/), whenever the binaries are cached or Go can build
// them (KUBE_LOCAL=0 leaves it out); a failed bring-up fails its tests.
// `k8s-cluster` exists only when KUBECONFIG names a real cluster: it installs
// the chart there with real images (test/e2e/k8s-*.test.ts); without one it is absent.
// `images` builds the gateway, controller and runner images with podman once
// (global setup: scripts/images.sh build, from a base made with mmdebstrap) and
// runs them (test/images/); a failed build fails its tests (IMAGES=0 leaves it out).
const IMAGES = process.env.IMAGES !== '0' && process.platform === 'linux' && process.arch === 'x64'
const KUBE_LOCAL =
  process.env.KUBE_LOCAL !== '0' &&
  process.platform === 'linux' &&
  process.arch === 'x64' &&
  (existsSync(path.join(process.env.KUBE_LOCAL_TOOLS ?? path.join(import.meta.dirname, '.tools', 'kube'), 'bin', 'kube-apiserver')) ||
    (process.env.PATH ?? '').split(':').some((dir) => dir !== '' && existsSync(path.join(dir, 'go'))))
if (!KUBE_LOCAL) console.log('vitest: project k8s left out (no cached .tools/kube binaries and no go to build them, or KUBE_LOCAL=0)')
const LOAD_TESTS = [
  'test/e2e/load.test.ts',
  'test/e2e/faults.test.ts',
  'test/e2e/runner-freeze.test.ts',
  'test/e2e/many-reaps.test.ts',
  'test/e2e/ws-slow-reader-memory.test.ts',
]

export default defineConfig({
  test: {
    projects: [
      {
        extends: true,
        test: {
          name: 'unit',
          include: ['test/**/*.test.ts'],
          exclude: ['test/e2e/**', 'test/kube-local/**', 'test/images/**', '**/*.integration.test.ts'],
          setupFiles: ['test/fixtures/unit-tier.ts'],
          isolate: false,
        },
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
      ...(KUBE_LOCAL
        ? [
            {
              extends: true,
              test: {
                name: 'k8s',
                include: ['test/kube-local/**/*.test.ts'],
                globalSetup: ['test/kube-local/global-setup.ts'],
                fileParallelism: false,
                testTimeout: 60_000,
                hookTimeout: 300_000,
              },
            },
          ]
        : []),
      ...(IMAGES
        ? [
            {
              extends: true,
              test: {
                name: 'images',
                include: ['test/images/**/*.test.ts'],
                globalSetup: ['test/images/global-setup.ts'],
                fileParallelism: false,
                testTimeout: 120_000,
                hookTimeout: 600_000,
              },
            },
          ]
        : []),
      ...(process.env.KUBECONFIG
        ? [{ extends: true, test: { name: 'k8s-cluster', include: ['test/e2e/k8s-*.test.ts'], testTimeout: 600_000, hookTimeout: 600_000 } }]
        : []),
    ],
    testTimeout: 20_000,
    hookTimeout: 20_000,
    pool: 'forks',
    // In CI a JSON report too, from which .ci/run prints a plain "N passed, N failed" line.
    reporters: process.env.CI ? ['default', ['json', { outputFile: 'test-results.json' }]] : ['default'],
  },
})
