import { describe, expect, test } from 'vitest'
import { parse as parseYaml } from 'yaml'
import { resolveConfig } from '../../service/config/mod.ts'
import { ControllerConfigSchema } from '../../controller/config.ts'
import { LABEL } from '../../controller/labels.ts'
import { buildSandboxPod } from '../../controller/pod-spec.ts'
import { CHART, find, helm, PRODUCTION_VALUES, render, validateManifest, type Manifest } from './render.ts'

/** The controller's sandbox pod as the rendered config makes it, validated like anything the controller sends. */
function sandboxPodOf(manifests: Manifest[]) {
  const text = find(manifests, 'ConfigMap', '-agent-runtime-config').data['config.yaml']
  const config = resolveConfig(parseYaml(text), {})
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
  return { pod, config }
}

const selects = (selector: Record<string, string>, labels: Record<string, string>) => Object.entries(selector).every(([k, v]) => labels[k] === v)

describe('chart - lint', () => {
  test.each([
    ['default values', []],
    ['production values', ['-f', PRODUCTION_VALUES]],
  ])('helm lint --strict passes with %s', async (_name, extra) => {
    const result = await helm(['lint', '--strict', CHART, ...extra])
    expect(result.stderr + result.stdout).toContain('1 chart(s) linted, 0 chart(s) failed')
    expect(result.code).toBe(0)
  })
})

describe('chart - default values', async () => {
  const manifests = await render()
  test('renders gateways, a controller with its RBAC, the config, the sandbox NetworkPolicy; all schema-valid', () => {
    expect(manifests.map((m) => `${m.kind}/${m.metadata.name}`).sort()).toEqual([
      'ConfigMap/ar-agent-runtime-config',
      'Deployment/ar-agent-runtime-controller',
      'Deployment/ar-agent-runtime-gateway',
      'NetworkPolicy/ar-agent-runtime-sandbox',
      'Pod/ar-agent-runtime-test-gateway',
      'PodDisruptionBudget/ar-agent-runtime-controller',
      'PodDisruptionBudget/ar-agent-runtime-gateway',
      'Role/ar-agent-runtime-controller',
      'RoleBinding/ar-agent-runtime-controller',
      'Service/ar-agent-runtime-gateway',
      'ServiceAccount/ar-agent-runtime-controller',
      'ServiceAccount/ar-agent-runtime-gateway',
      'ServiceAccount/ar-agent-runtime-sandbox',
    ])
    for (const m of manifests) validateManifest(m)
  })

  test('RBAC: a namespaced Role for pods, leases and events only', () => {
    expect(manifests.some((m) => m.kind === 'ClusterRole' || m.kind === 'ClusterRoleBinding')).toBe(false)
    expect(find(manifests, 'Role').rules).toEqual([
      { apiGroups: [''], resources: ['pods'], verbs: ['get', 'list', 'watch', 'create', 'patch', 'delete'] },
      { apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['get', 'create', 'update'] },
      { apiGroups: [''], resources: ['events'], verbs: ['create'] },
    ])
    const binding = find(manifests, 'RoleBinding')
    expect(binding.roleRef).toEqual({ apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'ar-agent-runtime-controller' })
    expect(binding.subjects).toEqual([{ kind: 'ServiceAccount', name: 'ar-agent-runtime-controller', namespace: 'agents' }])
  })

  test('gateway and controller pods are locked down too; only the controller mounts a token', () => {
    for (const [name, token] of [
      ['-gateway', false],
      ['-controller', true],
    ] as const) {
      const spec = find(manifests, 'Deployment', name).spec.template.spec
      expect(spec.automountServiceAccountToken).toBe(token)
      expect(spec.securityContext).toMatchObject({ runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } })
      expect(spec.containers[0].securityContext).toEqual({
        runAsNonRoot: true,
        runAsUser: 10001,
        runAsGroup: 10001,
        allowPrivilegeEscalation: false,
        privileged: false,
        readOnlyRootFilesystem: true,
        capabilities: { drop: ['ALL'] },
        seccompProfile: { type: 'RuntimeDefault' },
      })
      expect(spec.containers[0].resources.limits).toBeDefined()
    }
    expect(find(manifests, 'Deployment', '-controller').spec.template.spec.containers[0].args).toEqual([
      'controller',
      '--config',
      '/etc/agent-runtime/config.yaml',
    ])
    expect(find(manifests, 'ServiceAccount', '-sandbox').automountServiceAccountToken).toBe(false)
  })

  test('the config is valid for the service and makes a locked-down sandbox pod that the NetworkPolicy selects', () => {
    const { pod, config } = sandboxPodOf(manifests)
    expect(config.controller.warm_pool).toBe(2)
    expect(config.runner.max_sessions).toBe(1)
    expect(config.session.work_dir).toBe('/sandbox/sessions')
    expect(pod.spec.serviceAccountName).toBe('ar-agent-runtime-sandbox')
    expect(pod.spec.automountServiceAccountToken).toBe(false)
    expect(pod.spec.containers[0].securityContext).toMatchObject({
      readOnlyRootFilesystem: true,
      allowPrivilegeEscalation: false,
      capabilities: { drop: ['ALL'] },
    })
    expect(pod.spec.containers[0].readinessProbe.httpGet).toEqual({ path: '/health/ready', port: 9090 })
    expect(pod.spec.volumes).toContainEqual({ name: 'config', configMap: { name: 'ar-agent-runtime-config' } })
    const policy = find(manifests, 'NetworkPolicy')
    expect(selects(policy.spec.podSelector.matchLabels, pod.metadata.labels)).toBe(true)
    expect(pod.metadata.labels[LABEL.pool]).toBe('ar-agent-runtime')
  })

  test('the sandbox NetworkPolicy: no ingress; egress to DNS, NATS and the model API only', () => {
    const spec = find(manifests, 'NetworkPolicy').spec
    expect(spec.policyTypes).toEqual(['Ingress', 'Egress'])
    expect(spec.ingress).toEqual([])
    expect(spec.egress).toEqual([
      {
        to: [{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'kube-system' } }, podSelector: { matchLabels: { 'k8s-app': 'kube-dns' } } }],
        ports: [
          { protocol: 'UDP', port: 53 },
          { protocol: 'TCP', port: 53 },
        ],
      },
      { to: [{ podSelector: { matchLabels: { 'app.kubernetes.io/name': 'nats' } } }], ports: [{ protocol: 'TCP', port: 4222 }] },
      {
        to: [{ ipBlock: { cidr: '0.0.0.0/0', except: ['10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16', '100.64.0.0/10', '169.254.0.0/16'] } }],
        ports: [{ protocol: 'TCP', port: 443 }],
      },
    ])
  })
})

describe('chart - operations: budgets, grace periods, accounts, env, labels, spread, probes, helm test', async () => {
  const manifests = await render()
  const podSpec = (component: string) => find(manifests, 'Deployment', `-${component}`).spec.template.spec

  test('a PodDisruptionBudget per Deployment lets one pod at a time go, and selects exactly that Deployment', () => {
    for (const component of ['gateway', 'controller']) {
      const budget = find(manifests, 'PodDisruptionBudget', `-${component}`)
      expect(budget.spec.maxUnavailable).toBe(1)
      const deployment = find(manifests, 'Deployment', `-${component}`)
      expect(budget.spec.selector.matchLabels).toEqual(deployment.spec.selector.matchLabels)
    }
  })

  test.each([
    ['the defaults: drain 30 s + 3 s, plus 10 s', [], 43, 43],
    ['a longer shutdown_grace and a short stop_grace', ['config.server.shutdown_grace=1m30s', 'config.engine.stop_grace=500ms'], 101, 101],
    ['explicit values above the drain', ['gateway.terminationGracePeriodSeconds=60', 'sandbox.terminationGracePeriodSeconds=120'], 60, 120],
  ])('termination grace periods of gateways and sandbox pods: %s', async (_name, set, gateway, sandbox) => {
    const rendered = await render({ set })
    expect(find(rendered, 'Deployment', '-gateway').spec.template.spec.terminationGracePeriodSeconds).toBe(gateway)
    expect(sandboxPodOf(rendered).pod.spec.terminationGracePeriodSeconds).toBe(sandbox)
    const { config } = sandboxPodOf(rendered)
    expect(gateway * 1000).toBeGreaterThan(config.server.shutdown_grace + config.engine.stop_grace)
  })

  test.each([
    [
      'a gateway grace period at the drain',
      ['gateway.terminationGracePeriodSeconds=33'],
      'gateway.terminationGracePeriodSeconds (33 s) must be above the drain',
    ],
    ['a sandbox grace period below it', ['sandbox.terminationGracePeriodSeconds=15'], 'sandbox.terminationGracePeriodSeconds (15 s) must be above the drain'],
    ['a shutdown_grace that is no duration', ['config.server.shutdown_grace=soon'], 'cannot read the duration "soon"'],
  ])('refused: %s', async (_name, set, message) => {
    await expect(render({ set })).rejects.toThrow(message)
  })

  test('ServiceAccounts: made by default; annotations, names, or an existing account; the RoleBinding follows the controller account', async () => {
    expect(podSpec('gateway').serviceAccountName).toBe('ar-agent-runtime-gateway')
    const rendered = await render({
      set: [
        'controller.serviceAccount.name=agents-controller',
        'controller.serviceAccount.annotations.eks\\.amazonaws\\.com/role-arn=arn:aws:iam::1:role/x',
        'gateway.serviceAccount.create=false',
        'gateway.serviceAccount.name=existing-gateway',
        'sandbox.serviceAccount.create=false',
      ],
    })
    const accounts = rendered.filter((m) => m.kind === 'ServiceAccount')
    expect(accounts.map((a) => a.metadata.name)).toEqual(['agents-controller'])
    expect(accounts[0]!.metadata.annotations).toEqual({ 'eks.amazonaws.com/role-arn': 'arn:aws:iam::1:role/x' })
    expect(accounts[0]!.automountServiceAccountToken).toBe(true)
    expect(find(rendered, 'Deployment', '-controller').spec.template.spec.serviceAccountName).toBe('agents-controller')
    expect(find(rendered, 'RoleBinding').subjects).toEqual([{ kind: 'ServiceAccount', name: 'agents-controller', namespace: 'agents' }])
    expect(find(rendered, 'Deployment', '-gateway').spec.template.spec.serviceAccountName).toBe('existing-gateway')
    expect(find(rendered, 'Deployment', '-gateway').spec.template.spec.automountServiceAccountToken).toBe(false)
    // No sandbox account made, none named: the namespace's default one (its token is still never mounted).
    expect(sandboxPodOf(rendered).pod.spec.serviceAccountName).toBe('default')
    expect(sandboxPodOf(rendered).pod.spec.automountServiceAccountToken).toBe(false)
  })

  test('extraEnv and podLabels reach the pods; sandbox podLabels reach the sandbox pods; selectors stay as they were', async () => {
    const rendered = await render({
      set: [
        'gateway.extraEnv[0].name=HTTP_PROXY',
        'gateway.extraEnv[0].value=http://proxy:3128',
        'controller.extraEnv[0].name=TOKEN',
        'controller.extraEnv[0].valueFrom.secretKeyRef.name=s',
        'controller.extraEnv[0].valueFrom.secretKeyRef.key=k',
        'gateway.podLabels.team=agents',
        'controller.podLabels.team=agents',
        'sandbox.podLabels.team=agents',
      ],
    })
    for (const m of rendered) validateManifest(m)
    const gateway = find(rendered, 'Deployment', '-gateway')
    expect(gateway.spec.template.spec.containers[0].env).toContainEqual({ name: 'HTTP_PROXY', value: 'http://proxy:3128' })
    expect(find(rendered, 'Deployment', '-controller').spec.template.spec.containers[0].env).toContainEqual({
      name: 'TOKEN',
      valueFrom: { secretKeyRef: { name: 's', key: 'k' } },
    })
    for (const component of ['-gateway', '-controller']) {
      const d = find(rendered, 'Deployment', component)
      expect(d.spec.template.metadata.labels.team).toBe('agents')
      expect(d.spec.selector.matchLabels.team).toBeUndefined()
    }
    const { pod } = sandboxPodOf(rendered)
    expect(pod.metadata.labels).toMatchObject({ team: 'agents', 'app.kubernetes.io/instance': 'ar', [LABEL.component]: 'sandbox' })
  })

  test('topology spread: as given, selecting the component pods when no labelSelector is given', async () => {
    const rendered = await render({
      set: [
        'gateway.topologySpreadConstraints[0].maxSkew=1',
        'gateway.topologySpreadConstraints[0].topologyKey=topology.kubernetes.io/zone',
        'gateway.topologySpreadConstraints[0].whenUnsatisfiable=ScheduleAnyway',
        'controller.topologySpreadConstraints[0].maxSkew=1',
        'controller.topologySpreadConstraints[0].topologyKey=kubernetes.io/hostname',
        'controller.topologySpreadConstraints[0].whenUnsatisfiable=DoNotSchedule',
        'controller.topologySpreadConstraints[0].labelSelector.matchLabels.custom=yes',
      ],
    })
    for (const m of rendered) validateManifest(m)
    expect(find(rendered, 'Deployment', '-gateway').spec.template.spec.topologySpreadConstraints).toEqual([
      {
        maxSkew: 1,
        topologyKey: 'topology.kubernetes.io/zone',
        whenUnsatisfiable: 'ScheduleAnyway',
        labelSelector: { matchLabels: find(rendered, 'Deployment', '-gateway').spec.selector.matchLabels },
      },
    ])
    expect(find(rendered, 'Deployment', '-controller').spec.template.spec.topologySpreadConstraints).toEqual([
      { maxSkew: 1, topologyKey: 'kubernetes.io/hostname', whenUnsatisfiable: 'DoNotSchedule', labelSelector: { matchLabels: { custom: 'yes' } } },
    ])
    expect(podSpec('gateway').topologySpreadConstraints).toBeUndefined()
  })

  test('the gateway has a startup probe on /health/live before liveness and readiness count; it can be turned off', async () => {
    expect(podSpec('gateway').containers[0].startupProbe).toEqual({ httpGet: { path: '/health/live', port: 'http' }, periodSeconds: 2, failureThreshold: 30 })
    const rendered = await render({ set: ['gateway.startupProbe.enabled=false'] })
    expect(find(rendered, 'Deployment', '-gateway').spec.template.spec.containers[0].startupProbe).toBeUndefined()
  })

  test('helm test: a hook pod that asks a gateway for /health/live through the Service, locked down like the rest', async () => {
    const pod = find(manifests, 'Pod', '-test-gateway')
    expect(pod.metadata.annotations).toEqual({ 'helm.sh/hook': 'test', 'helm.sh/hook-delete-policy': 'before-hook-creation,hook-succeeded' })
    expect(pod.spec.restartPolicy).toBe('Never')
    expect(pod.spec.automountServiceAccountToken).toBe(false)
    expect(pod.spec.containers[0].image).toBe(podSpec('gateway').containers[0].image)
    expect(pod.spec.containers[0].command.at(-1)).toBe('http://ar-agent-runtime-gateway.agents.svc:80/health/live')
    expect(pod.spec.containers[0].securityContext).toEqual(podSpec('gateway').containers[0].securityContext)
    expect((await render({ set: ['tests.enabled=false'] })).some((m) => m.kind === 'Pod')).toBe(false)
  })

  test('values.schema.json refuses a bad budget, grace period, env entry or spread', async () => {
    for (const [set, where] of [
      [['gateway.podDisruptionBudget.maxUnavailable=lots'], '/gateway/podDisruptionBudget/maxUnavailable'],
      [['sandbox.terminationGracePeriodSeconds=-5'], '/sandbox/terminationGracePeriodSeconds'],
      [['gateway.extraEnv[0].value=x'], '/gateway/extraEnv/0'],
      [['controller.topologySpreadConstraints[0].maxSkew=1'], '/controller/topologySpreadConstraints/0'],
    ] as const) {
      await expect(render({ set: [...set] })).rejects.toThrow(where)
    }
  })
})

describe('chart - probes and metrics', async () => {
  const manifests = await render()
  const controller = () => find(manifests, 'Deployment', '-controller').spec.template.spec.containers[0]

  test('the controller runs its own image and answers probes on its port: startup and liveness /healthz, readiness /readyz', () => {
    const container = controller()
    expect(container.image).toBe('agent-runtime-controller:0.1.0')
    expect(find(manifests, 'Deployment', '-gateway').spec.template.spec.containers[0].image).toBe('agent-runtime-gateway:0.1.0')
    expect(container.ports).toEqual([{ name: 'http', containerPort: 8081, protocol: 'TCP' }])
    expect(container.startupProbe).toEqual({ httpGet: { path: '/healthz', port: 'http' }, periodSeconds: 2, failureThreshold: 30 })
    expect(container.readinessProbe).toEqual({ httpGet: { path: '/readyz', port: 'http' }, periodSeconds: 10 })
    expect(container.livenessProbe).toEqual({ httpGet: { path: '/healthz', port: 'http' }, periodSeconds: 10, failureThreshold: 6 })
  })

  test('the config serves the controller probes on controller.port and makes gateways ready without a runner', async () => {
    const { config } = sandboxPodOf(manifests)
    expect(config.controller.http_port).toBe(8081)
    expect(config.server.readiness).toBe('bus')
    // The controller's own schema takes the chart's controller section as it is.
    const raw = parseYaml(find(manifests, 'ConfigMap', '-agent-runtime-config').data['config.yaml'])
    expect(ControllerConfigSchema.parse(raw.controller).http_port).toBe(8081)
    const rendered = await render({ set: ['controller.port=9200', 'controller.startupProbe.enabled=false'] })
    expect(sandboxPodOf(rendered).config.controller.http_port).toBe(9200)
    const container = find(rendered, 'Deployment', '-controller').spec.template.spec.containers[0]
    expect(container.ports[0].containerPort).toBe(9200)
    expect(container.startupProbe).toBeUndefined()
  })

  test('sandbox pods name their probe port, so a PodMonitor can scrape it', () => {
    const { pod } = sandboxPodOf(manifests)
    expect(pod.spec.containers[0].ports).toEqual([{ name: 'http', containerPort: 9090, protocol: 'TCP' }])
  })

  test('metrics.podMonitor: sandbox runners and the controller scraped on their http port; Prometheus let in on the probe port only', async () => {
    expect(manifests.some((m) => m.kind === 'PodMonitor')).toBe(false)
    const rendered = await render({ set: ['metrics.podMonitor.enabled=true', 'metrics.podMonitor.labels.release=prometheus'] })
    for (const m of rendered) validateManifest(m)
    const sandbox = find(rendered, 'PodMonitor', '-sandbox')
    const { pod } = sandboxPodOf(rendered)
    expect(selects(sandbox.spec.selector.matchLabels, pod.metadata.labels)).toBe(true)
    expect(sandbox.spec.podMetricsEndpoints).toEqual([{ port: 'http', path: '/metrics', interval: '30s' }])
    expect(sandbox.metadata.labels.release).toBe('prometheus')
    const monitor = find(rendered, 'PodMonitor', '-controller')
    const template = find(rendered, 'Deployment', '-controller').spec.template
    expect(selects(monitor.spec.selector.matchLabels, template.metadata.labels)).toBe(true)
    expect(selects(monitor.spec.selector.matchLabels, find(rendered, 'Deployment', '-gateway').spec.template.metadata.labels)).toBe(false)
    expect(template.spec.containers[0].ports[0].name).toBe(monitor.spec.podMetricsEndpoints[0].port)
    expect(find(rendered, 'NetworkPolicy').spec.ingress).toEqual([
      { from: [{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'monitoring' } } }], ports: [{ protocol: 'TCP', port: 9090 }] },
    ])
  })

  test('metrics.podMonitor without a runner probe port is refused with the reason', async () => {
    await expect(render({ set: ['metrics.podMonitor.enabled=true', 'sandbox.probePort=0'] })).rejects.toThrow('metrics.podMonitor needs sandbox.probePort')
  })

  test('values.schema.json refuses a bad controller port or scrape peers', async () => {
    for (const [set, where] of [
      [['controller.port=0'], '/controller/port'],
      [['controller.startupProbe.failureThreshold=0'], '/controller/startupProbe/failureThreshold'],
      [['metrics.podMonitor.scrapeFrom=monitoring'], '/metrics/podMonitor/scrapeFrom'],
      [['image.controller.repository='], '/image/controller/repository'],
    ] as const) {
      await expect(render({ set: [...set] })).rejects.toThrow(where)
    }
  })
})

describe('chart - production values', async () => {
  const manifests = await render({ values: [PRODUCTION_VALUES], release: 'prod' })
  test('every object is schema-valid, the bundled NATS included', () => {
    for (const m of manifests) validateManifest(m)
    expect(find(manifests, 'StatefulSet', 'nats').spec.replicas).toBe(3)
  })
  test('the bundled NATS pods meet PodSecurity restricted (the official chart sets no security context)', () => {
    const spec = find(manifests, 'StatefulSet', 'nats').spec.template.spec
    expect(spec.securityContext).toEqual({ runAsNonRoot: true, runAsUser: 1000, runAsGroup: 1000, fsGroup: 1000, seccompProfile: { type: 'RuntimeDefault' } })
    expect(spec.containers.map((c: Manifest) => c.name)).toEqual(['nats', 'reloader'])
    for (const container of spec.containers) expect(container.securityContext).toEqual({ allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } })
  })
  test('autoscaled gateways behind a TLS Ingress, scraped by Prometheus with the API key', () => {
    expect(find(manifests, 'Deployment', '-gateway').spec.replicas).toBeUndefined()
    expect(find(manifests, 'HorizontalPodAutoscaler').spec).toMatchObject({
      minReplicas: 3,
      maxReplicas: 20,
      scaleTargetRef: { kind: 'Deployment', name: 'prod-agent-runtime-gateway' },
    })
    expect(find(manifests, 'Ingress').spec.tls).toEqual([{ hosts: ['agents.example.com'], secretName: 'agents-example-com-tls' }])
    const endpoint = find(manifests, 'ServiceMonitor').spec.endpoints[0]
    expect(endpoint).toMatchObject({
      port: 'http',
      path: '/metrics',
      authorization: { type: 'Bearer', credentials: { name: 'agent-runtime-api-keys', key: 'metrics-token' } },
    })
    const env = find(manifests, 'Deployment', '-gateway').spec.template.spec.containers[0].env
    expect(env).toContainEqual({ name: 'SERVICE_API_KEYS', valueFrom: { secretKeyRef: { name: 'agent-runtime-api-keys', key: 'SERVICE_API_KEYS' } } })
    expect(env).toContainEqual({ name: 'SERVICE_CHAT_BOT_TOKEN', valueFrom: { secretKeyRef: { name: 'agent-runtime-chat', key: 'bot-token' } } })
  })
  test('every part that connects to NATS gets the NATS user from its Secret', () => {
    const natsUser = [
      { name: 'NATS_USER', valueFrom: { secretKeyRef: { name: 'agent-runtime-nats', key: 'user' } } },
      { name: 'NATS_PASSWORD', valueFrom: { secretKeyRef: { name: 'agent-runtime-nats', key: 'password' } } },
    ]
    for (const part of ['-gateway', '-controller']) {
      const env = find(manifests, 'Deployment', part).spec.template.spec.containers[0].env
      for (const entry of natsUser) expect(env).toContainEqual(entry)
    }
    const { pod } = sandboxPodOf(manifests)
    for (const entry of natsUser) expect(pod.spec.containers[0].env).toContainEqual(entry)
  })
  test('gVisor sandboxes on per-pod volumes with the model key from its Secret, NATS reached by pod selector', () => {
    const { pod, config } = sandboxPodOf(manifests)
    expect(config.nats.url).toBe('nats://prod-nats:4222')
    expect(config.engine.model).toBe('claude-sonnet-4-5')
    expect(pod.spec.runtimeClassName).toBe('gvisor')
    expect(pod.spec.volumes[0].ephemeral.volumeClaimTemplate.spec).toEqual({
      accessModes: ['ReadWriteOnce'],
      resources: { requests: { storage: '20Gi' } },
      storageClassName: 'fast-ssd',
    })
    expect(pod.spec.containers[0].env).toContainEqual({
      name: 'ANTHROPIC_API_KEY',
      valueFrom: { secretKeyRef: { name: 'agent-runtime-model', key: 'ANTHROPIC_API_KEY' } },
    })
    expect(pod.spec.imagePullSecrets).toEqual([{ name: 'registry-credentials' }])
    expect(pod.spec.tolerations).toEqual([{ key: 'sandbox', operator: 'Exists', effect: 'NoSchedule' }])
    // The model key goes to sandboxes only.
    expect(JSON.stringify(find(manifests, 'Deployment', '-gateway'))).not.toContain('agent-runtime-model')
    const nats = find(manifests, 'NetworkPolicy').spec.egress[1]
    expect(nats).toEqual({
      to: [{ podSelector: { matchLabels: { 'app.kubernetes.io/name': 'nats', 'app.kubernetes.io/instance': 'prod' } } }],
      ports: [{ protocol: 'TCP', port: 4222 }],
    })
    const natsPod = find(manifests, 'StatefulSet', 'nats').spec.template.metadata.labels
    expect(selects(nats.to[0].podSelector.matchLabels, natsPod)).toBe(true)
  })
})

describe('chart - values.schema.json rejects bad values', () => {
  test.each([
    ['a negative warm pool', ['sandbox.warmPool=-1'], '/sandbox/warmPool'],
    ['an unknown top-level key', ['replicas=3'], "additional properties 'replicas' not allowed"],
    ['a bad duration', ['sandbox.podReadyTimeout=2 minutes'], '/sandbox/podReadyTimeout'],
    ['an unknown storage type', ['sandbox.storage.type=hostPath'], '/sandbox/storage/type'],
    ['a shared claim without its name', ['sandbox.storage.type=persistentVolumeClaim'], '/sandbox/storage/claimName'],
    ['a bad memory quantity', ['sandbox.resources.limits.memory=lots'], '/sandbox/resources/limits/memory'],
    ['a runtime class that is not a name', ['sandbox.runtimeClassName=Not_A_Name'], '/sandbox/runtimeClassName'],
    ['a NATS URL without scheme', ['nats.url=nats.example:4222'], '/nats/url'],
    ['a pull policy typo', ['image.runner.pullPolicy=Sometimes'], '/image/runner/pullPolicy'],
    ['a bad CIDR', ['sandbox.networkPolicy.modelApi.cidrs={0.0.0.0}'], '/sandbox/networkPolicy/modelApi/cidrs/0'],
    ['too many controller replicas', ['controller.replicas=9'], '/controller/replicas'],
  ])('%s', async (_name, set, message) => {
    await expect(render({ set })).rejects.toThrow(message)
  })
})
