/**
 * The V8 flags every service process runs with: package.json's `start`, both
 * Dockerfiles' ENTRYPOINT, this folder's shebang and the test and benchmark
 * fixture (test/bin/node-flags.test.ts holds them all to this list).
 *
 * `--max-semi-space-size=4`: V8 lets the young generation grow to 3 × 16 MB
 * under a relay's allocation rate and keeps the pages; with 4 MB semi-spaces
 * the dev service held 186 MB instead of 300 MB after the benchmark's 100
 * sessions, and an idle session's runner memory fell from 161 to 87 KB, at no
 * CPU per event the benchmark could tell apart (bench/README.md).
 */
export const NODE_FLAGS: readonly string[] = ['--max-semi-space-size=4']
