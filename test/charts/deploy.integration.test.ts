import { readFile } from 'node:fs/promises'
import path from 'node:path'
import { describe, expect, test } from 'vitest'
import { parse as parseYaml } from 'yaml'
import { DEPLOY_FILE, renderDeploy } from '../../scripts/render-deploy.ts'
import { find, parseManifests, ROOT, validateManifest } from './render.ts'

describe('deploy - plain manifests', () => {
  test('deploy/agent-runtime.yaml is what the chart renders now (run `node scripts/render-deploy.ts` after a chart change)', async () => {
    expect(await readFile(DEPLOY_FILE, 'utf8')).toBe(await renderDeploy())
  })

  test('every manifest, the namespace included, is schema-valid; the kustomization lists them', async () => {
    const manifests = parseManifests(await readFile(DEPLOY_FILE, 'utf8'))
    const namespace = parseManifests(await readFile(path.join(ROOT, 'deploy', 'namespace.yaml'), 'utf8'))
    for (const m of [...manifests, ...namespace]) validateManifest(m)
    expect(namespace[0]!.metadata.labels['pod-security.kubernetes.io/enforce']).toBe('restricted')
    const kustomization = parseYaml(await readFile(path.join(ROOT, 'deploy', 'kustomization.yaml'), 'utf8'))
    expect(kustomization).toMatchObject({ namespace: 'agent-runtime', resources: ['namespace.yaml', 'agent-runtime.yaml'] })
    expect(find(manifests, 'Role').metadata.name).toBe('agent-runtime-controller')
    expect(manifests.some((m) => m.kind === 'StatefulSet')).toBe(false)
  })
})
