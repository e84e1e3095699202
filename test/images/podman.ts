/** podman in the images tier: the images scripts/images.sh builds, run the way the chart runs them. */
import { execFile } from 'node:child_process'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { inject } from 'vitest'

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..')
export const IMAGES_SCRIPT = path.join(ROOT, 'scripts', 'images.sh')
/** podman's settings for these machines (runc, explicit ulimits), as the script uses them. */
export const PODMAN_ENV = { ...process.env, CONTAINERS_CONF: path.join(ROOT, 'scripts', 'images', 'containers.conf') }
/** Debian's nats-server as an image (scripts/images.sh build): no registry is reachable here. */
export const NATS_IMAGE = 'localhost/agent-runtime/nats:2.9'

export interface ImagesBuild {
  seconds: number
  log: string
  /** Why the build failed; absent when it worked. */
  error?: string
  /** podman's Docker API, for testcontainers (DOCKER_HOST). */
  dockerHost?: string
}

/** Throws the build's failure (in beforeAll: every test of the file fails with it). */
export function requireImages(): ImagesBuild {
  const build = inject('imagesBuild')
  if (build.error !== undefined) throw new Error(build.error)
  return build
}

export async function podman(args: string[]): Promise<string> {
  try {
    const { stdout } = await promisify(execFile)('podman', args, { env: PODMAN_ENV, maxBuffer: 16 * 1024 * 1024 })
    return stdout
  } catch (err) {
    const e = err as { stderr?: string; message: string }
    throw new Error(`podman ${args.join(' ')}: ${e.stderr || e.message}`)
  }
}

/**
 * The chart's pod settings as podman flags: read-only root, no capabilities,
 * no privilege escalation, uid 10001, writable tmpfs only where the pod has
 * emptyDirs; host network, so a container reaches this test's loopback servers.
 */
export const LOCKED_DOWN = ['--network', 'host', '--read-only', '--cap-drop', 'ALL', '--security-opt', 'no-new-privileges', '--user', '10001:10001']

/** Starts a detached container; `stop()` removes it and returns its output. */
export async function runContainer(
  name: string,
  image: string,
  options: { flags?: string[]; env?: Record<string, string>; args?: string[] } = {},
): Promise<{ name: string; logs(): Promise<string>; stop(): Promise<void> }> {
  await podman(['rm', '-f', name]).catch(() => '')
  const env = Object.entries(options.env ?? {}).flatMap(([key, value]) => ['-e', `${key}=${value}`])
  await podman(['run', '-d', '--name', name, ...LOCKED_DOWN, ...(options.flags ?? []), ...env, image, ...(options.args ?? [])])
  return {
    name,
    logs: () => podman(['logs', name]).catch((err: Error) => err.message),
    async stop() {
      await podman(['rm', '-f', '-t', '2', name]).catch(() => '')
    },
  }
}
