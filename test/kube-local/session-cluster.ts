/**
 * The set-up of a session test on the real API server, once for every such file: the chart
 * installed with helm into a namespace enforcing `restricted`, the file's NATS, the state read
 * through the test's own connection, `PodRunners` starting each Running pod's runner from its
 * pod spec (NATS on loopback, the fake CLI, any free probe port), the controller with the chart's
 * ServiceAccount token, a gateway process and a WebSocket client to it. What differs between the
 * files (NATS in operator mode, a Secret the chart's values name, each process's NATS user) is
 * said in the options.
 */
import { mkdtemp, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import pino from 'pino'
import { afterAll, beforeAll } from 'vitest'
import { NatsBus, type NatsAuth } from '../../bus/mod.ts'
import { resolveConfig } from '../../service/config/mod.ts'
import { openServiceState } from '../../service/state.ts'
import { CHART } from '../charts/render.ts'
import { startNats, type NatsFixture } from '../fixtures/nats-server.ts'
import { startServiceProcess } from '../fixtures/service-process.ts'
import { FAKE_CLAUDE } from '../fixtures/stack.ts'
import { WsClient } from '../fixtures/ws-client.ts'
import { admin, chartConfig, helmOn, kubeLocalForFile, restrictedNamespace, serviceAccountKubeconfig } from './kube-local.ts'
import { PodRunners } from './pod-runners.ts'
import { sessionViews, type SessionCluster } from './session-views.ts'

type Config = Record<string, any>

export interface SessionClusterOptions {
  namespace: string
  /** The helm release; the chart's objects, and the pool, are named `<release>-agent-runtime`. */
  release: string
  /** The NATS subject prefix of every process. */
  prefix: string
  /** Starts the file's nats-server once the scratch folder `dir` exists (default: startNats). */
  startNats?(dir: string): Promise<NatsFixture>
  /** Once the namespace exists, before the chart is installed: what its values name (a Secret, say). */
  beforeInstall?(): Promise<void>
  /** Extra `helm install` arguments (`--set …`), asked for once NATS started. */
  helmArgs?(): string[]
  /** How the test's own connection authenticates (default: anonymous). */
  busAuth?(): Promise<NatsAuth>
  /** The controller's and the gateway's config from the chart's, pointed at the file's NATS (default: that one). */
  controllerConfig?(base: Config): Promise<Config>
  gatewayConfig?(base: Config): Promise<Config>
}

/** What runs once the file's beforeAll is done (set there), and what the tests read off it. */
export type SessionClusterForFile = SessionCluster &
  ReturnType<typeof sessionViews> & {
    /** `<release>-agent-runtime`: the chart's objects' names. */
    fullname: string
    /** The file's scratch folder (the pods' volumes, config files, kubeconfigs). */
    dir: string
    nats: NatsFixture
    bus: NatsBus
    /** A kubeconfig with the token of the chart's controller ServiceAccount. */
    controllerKubeconfig: string
  }

/**
 * Starts it all in a beforeAll of the calling file and stops it in an afterAll; when the control
 * plane did not come up, every test of the file fails with why (kubeLocalForFile).
 */
export function sessionClusterForFile(options: SessionClusterOptions): SessionClusterForFile {
  const kube = kubeLocalForFile()
  const { namespace, release, prefix } = options
  const fullname = `${release}-agent-runtime`
  const s = { namespace, pool: fullname, fullname } as SessionClusterForFile
  Object.assign(
    s,
    sessionViews(() => s),
  )

  beforeAll(async () => {
    if (kube === undefined) return
    s.api = admin(kube.kubeconfig)
    s.dir = await mkdtemp(path.join(os.tmpdir(), `${namespace}-`))
    s.nats = await (options.startNats ?? startNats)(s.dir)
    await restrictedNamespace(s.api, namespace)
    await options.beforeInstall?.()
    await helmOn(kube.kubeconfig, ['install', release, CHART, '--namespace', namespace, '--wait', '--timeout', '3m', ...(options.helmArgs?.() ?? [])])
    s.controllerKubeconfig = await serviceAccountKubeconfig(s.api, namespace, `${fullname}-controller`, path.join(s.dir, 'controller.kubeconfig'))
    const configYaml = (await s.api.core.readNamespacedConfigMap({ name: `${fullname}-config`, namespace })).data!['config.yaml']!
    const base = chartConfig(configYaml, s.nats.url, prefix)
    const auth = await options.busAuth?.()
    s.bus = await NatsBus.connect(s.nats.url, { name: `${namespace}-test`, ...(auth !== undefined && { auth }) })
    s.state = await openServiceState(s.bus, resolveConfig(base, {}), pino({ level: 'silent' }))
    s.pods = new PodRunners({
      api: s.api,
      namespace,
      pool: fullname,
      dir: s.dir,
      local: {
        config(config) {
          Object.assign(config, chartConfig(JSON.stringify(config), s.nats.url, prefix))
          config.engine = { ...config.engine, command: FAKE_CLAUDE.command, args: FAKE_CLAUDE.args }
          // Many pods share this host: any free port for each runner's probe server.
          config.runner = { ...config.runner, http_port: 0 }
        },
        env: { NATS_URL: s.nats.url },
      },
    })
    await s.pods.start()
    const controllerConfig = options.controllerConfig ? await options.controllerConfig(base) : base
    s.controller = await startServiceProcess('controller', controllerConfig, s.dir, {
      KUBECONFIG: s.controllerKubeconfig,
      POD_NAME: 'ctl-0',
      POD_NAMESPACE: namespace,
    })
    s.gateway = await startServiceProcess('gateway', options.gatewayConfig ? await options.gatewayConfig(base) : base, s.dir)
    s.client = await WsClient.connect(`${s.gateway.address!.replace('http', 'ws')}/ws/v1/agent`)
  }, 300_000)

  afterAll(async () => {
    await s.client?.close()
    await s.gateway?.stop('SIGKILL')
    await s.controller?.stop('SIGKILL')
    await s.pods?.stop()
    await s.state?.close()
    await s.bus?.close()
    await s.nats?.stop()
    if (s.api) await s.api.core.deleteNamespace({ name: namespace }).catch(() => {})
    if (s.dir) await rm(s.dir, { recursive: true, force: true })
  })

  return s
}
