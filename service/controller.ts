import type { Logger } from 'pino'
import type { MemoryBus, NatsBus } from '../bus/mod.ts'
import {
  BusDemandSource,
  ClientNodeKubeApi,
  Controller,
  loadKubeConfig,
  publishSessionError,
  RegistrySessionEvents,
  registrySessionSource,
  resolveNamespace,
  summarizePods,
  systemClock,
  type KubeApi,
  type SessionEvents,
  type SessionSource,
} from '../controller/mod.ts'
import { readFile } from 'node:fs/promises'
import { accountSigner } from '../controller/credentials/jwt.ts'
import { SessionAssigner } from '../controller/credentials/assigner.ts'
import { ControllerMetrics } from '../observability/controller-metrics.ts'
import { startControllerServer } from '../observability/controller-server.ts'
import { busConnected } from '../observability/readiness.ts'
import type { Config } from './config/schema.ts'
import { openServiceState } from './state.ts'

/** What the rest of the service hands the controller mode; each part has a stand-in until it is wired. */
export interface ControllerWiring {
  /** The session registry (issue 6: the JetStream KV bucket). */
  sessions?: SessionSource
  /** Session errors and owner releases (issue 6: the bus and the registry). */
  events?: SessionEvents
  /** A Kubernetes API other than the one KUBECONFIG or the pod's service account names (tests). */
  api?: KubeApi
}

/**
 * `agent-runtime controller`: the sandbox controller, serving demand over the
 * bus. Without wiring it reads the session registry of `state.*` and releases
 * owners there, and publishes session errors on the session's event subject.
 * With `controller.http_port` it serves /healthz, /readyz and /metrics.
 * Closes the bus when stopped.
 */
export async function startControllerService(
  config: Config,
  bus: MemoryBus | NatsBus,
  log: Logger,
  wiring: ControllerWiring = {},
): Promise<{ controller: Controller; address?: string; stop(): Promise<void> }> {
  const settings = config.controller
  const logger = log.child({ component: 'controller' })
  let closeState: (() => Promise<void>) | undefined
  let server: { address: string; close(): Promise<void> } | undefined
  try {
    let api = wiring.api
    if (api === undefined) {
      const kubeConfig = loadKubeConfig()
      api = new ClientNodeKubeApi(kubeConfig, resolveNamespace(settings.kube_namespace, kubeConfig))
    }
    let sessions = wiring.sessions
    let events = wiring.events
    if (sessions === undefined || events === undefined) {
      const state = await openServiceState(bus, config, logger)
      closeState = () => state.close()
      sessions ??= registrySessionSource(state.registry, logger)
      const publish = publishSessionError(bus, state.registry, config.nats.prefix)
      events ??= new RegistrySessionEvents(
        state.registry,
        async (id, code, message) => {
          logger.warn({ session_id: id, code }, `session error sent to the session's clients: ${message}`)
          return publish(id, code, message)
        },
        state.leases,
      )
    }
    const metrics = new ControllerMetrics({
      leading: () => controller.leading,
      // A former leader's cache is stale: only the leader reports pods.
      pods: () => summarizePods(controller.leading ? controller.informer.pods() : []),
      warmPoolTarget: settings.warm_pool,
    })
    const credentials = settings.session_credentials
    const assigner =
      credentials &&
      new SessionAssigner({
        bus,
        prefix: config.nats.prefix,
        signer: accountSigner(await readFile(credentials.signing_key_file, 'utf8')),
        account: credentials.account,
        ttlMs: credentials.ttl,
      })
    const controller: Controller = new Controller({
      assigner,
      api,
      config: settings,
      sessions,
      demand: new BusDemandSource(bus, config.nats.prefix),
      events,
      log: logger,
      clock: systemClock,
      observer: metrics,
      ...(process.env.POD_NAME && { identity: process.env.POD_NAME }),
    })
    controller.start()
    if (settings.http_port !== undefined) {
      const kube = api
      server = await startControllerServer({
        port: settings.http_port,
        host: config.server.host,
        log: logger,
        metrics,
        leading: () => controller.leading,
        async checks() {
          const answers = await kube.getLease(settings.leader_election.lease_name).then(
            () => true,
            () => false,
          )
          return { bus: busConnected(bus), kube: answers && (!controller.leading || controller.informer.synced) }
        },
      })
    }
    log.info(
      {
        mode: 'controller',
        session_credentials: assigner !== undefined,
        namespace: api.namespace,
        pool: settings.pool,
        warm_pool: settings.warm_pool,
        identity: controller.identity,
        address: server?.address,
      },
      'agent runtime started',
    )
    return {
      controller,
      ...(server && { address: server.address }),
      async stop() {
        await server?.close()
        await controller.stop()
        await closeState?.()
        await bus.close()
      },
    }
  } catch (err) {
    await server?.close().catch(() => {})
    await closeState?.().catch(() => {})
    await bus.close().catch(() => {})
    throw err
  }
}
