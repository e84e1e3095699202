/** The chart's per-role NATS users: each part gets its own user and reply inbox; a role left empty falls back to secrets.nats. */
import { describe, expect, test } from 'vitest'
import { parse as parseYaml } from 'yaml'
import { resolveConfig } from '../../service/config/mod.ts'
import { inboxPrefixFor } from '../../contract/permissions.ts'
import { buildSandboxPod } from '../../controller/pod-spec.ts'
import { find, render, validateManifest, type Manifest } from './render.ts'

const envOf = (manifests: Manifest[], part: string): Record<string, unknown>[] => find(manifests, 'Deployment', part).spec.template.spec.containers[0].env

function sandboxEnv(manifests: Manifest[]): Record<string, unknown>[] {
  const config = resolveConfig(parseYaml(find(manifests, 'ConfigMap', '-agent-runtime-config').data['config.yaml']), {})
  const pod = JSON.parse(
    JSON.stringify(
      buildSandboxPod({
        name: `${config.controller.pool}-abcdefghij`,
        pool: config.controller.pool,
        namespace: 'agents',
        settings: config.controller.sandbox,
        purpose: { kind: 'warm' },
      }),
    ),
  )
  validateManifest(pod)
  return pod.spec.containers[0].env
}

const user = (secret: string) => [
  { name: 'NATS_USER', valueFrom: { secretKeyRef: { name: secret, key: 'NATS_USER' } } },
  { name: 'NATS_PASSWORD', valueFrom: { secretKeyRef: { name: secret, key: 'NATS_PASSWORD' } } },
]

describe('chart - NATS users per role', async () => {
  const prefix = 'team.a'
  const manifests = await render({
    set: [
      `nats.prefix=${prefix}`,
      'secrets.nats.existingSecret=shared',
      'secrets.natsRoles.gateway.existingSecret=nats-gateway',
      'secrets.natsRoles.runner.existingSecret=nats-runner',
    ],
  })

  test('each role with a user of its own gets it, and the inbox prefix its permissions allow', () => {
    for (const m of manifests) validateManifest(m)
    const gateway = envOf(manifests, '-gateway')
    for (const entry of user('nats-gateway')) expect(gateway).toContainEqual(entry)
    expect(gateway).toContainEqual({ name: 'NATS_INBOX_PREFIX', value: inboxPrefixFor({ role: 'gateway', prefix }) })
    const sandbox = sandboxEnv(manifests)
    for (const entry of user('nats-runner')) expect(sandbox).toContainEqual(entry)
    expect(sandbox).toContainEqual({ name: 'NATS_INBOX_PREFIX', value: inboxPrefixFor({ role: 'runner', prefix }) })
  })

  test('a role left empty uses the shared user and the default inbox', () => {
    const controller = envOf(manifests, '-controller')
    for (const entry of user('shared')) expect(controller).toContainEqual(entry)
    expect(controller.map((e) => e.name)).not.toContain('NATS_INBOX_PREFIX')
  })

  test('no part gets another role’s user', () => {
    expect(JSON.stringify(envOf(manifests, '-gateway'))).not.toMatch(/nats-runner|"shared"/)
    expect(JSON.stringify(envOf(manifests, '-controller'))).not.toMatch(/nats-runner|nats-gateway/)
    expect(JSON.stringify(sandboxEnv(manifests))).not.toMatch(/nats-gateway|"shared"/)
  })
})
