import { z } from 'zod'
import { DurationField } from '../config/fields.ts'

/**
 * The `controller` section of the config file: the `agent-runtime controller`
 * mode (controller/README.md). Only that mode reads it; the other modes accept
 * and ignore it, so one config file (or ConfigMap) can serve every component.
 */

/** A duration in the file, milliseconds once parsed; `allowZero` lets `0` mean off. */
const DurationMs = (fallback: string, allowZero = false) => DurationField(fallback, { allowZero })

/** A Kubernetes object name (RFC 1123 DNS label). */
const DnsLabel = z.string().regex(/^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/, 'must be a lower-case RFC 1123 name (a-z, 0-9, -; at most 63)')
/** A Kubernetes resource quantity such as `500m`, `2`, `1Gi`. */
const Quantity = z.string().regex(/^[0-9]+(\.[0-9]+)?(m|k|Ki|M|Mi|G|Gi|T|Ti|P|Pi|E|Ei)?$/, 'must be a Kubernetes quantity such as 500m, 2, 512Mi, 10Gi')
const ResourceList = z.strictObject({ cpu: Quantity.optional(), memory: Quantity.optional(), 'ephemeral-storage': Quantity.optional() })

const Storage = z.discriminatedUnion('type', [
  /** Node-local scratch space that lives as long as the pod (the default). */
  z.strictObject({ type: z.literal('emptyDir'), size_limit: Quantity.default('10Gi') }),
  /** A PersistentVolumeClaim per pod, made and removed by Kubernetes with the pod (generic ephemeral volume). */
  z.strictObject({ type: z.literal('ephemeral'), size: Quantity.default('10Gi'), storage_class: z.string().min(1).optional() }),
  /** An existing claim shared by every sandbox pod (ReadWriteMany); sandboxes can then see each other's files. */
  z.strictObject({ type: z.literal('persistentVolumeClaim'), claim_name: DnsLabel }),
])

const SecretEnv = z.strictObject({ name: z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/), secret: DnsLabel, key: z.string().min(1) })

const Sandbox = z.strictObject({
  /** The runner image (Dockerfile.runner). */
  image: z.string().min(1).default('agent-runtime-runner:latest'),
  image_pull_policy: z.enum(['Always', 'IfNotPresent', 'Never']).default('IfNotPresent'),
  image_pull_secrets: z.array(DnsLabel).default([]),
  /** ConfigMap holding the runner's `config.yaml`, mounted at /etc/agent-runtime; none = the image's defaults. */
  config_map: DnsLabel.optional(),
  /** Extra environment of the runner container (NATS_URL, LOG_LEVEL, …). */
  env: z.record(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/), z.string()).default({}),
  /** Environment variables read from existing Secrets (the model API key). */
  secret_env: z.array(SecretEnv).default([]),
  resources: z
    .strictObject({
      requests: ResourceList.default({ cpu: '250m', memory: '512Mi' }),
      limits: ResourceList.default({ cpu: '2', memory: '2Gi' }),
    })
    .prefault({}),
  /** e.g. `gvisor` or `kata`; none = the cluster default runtime. */
  runtime_class_name: DnsLabel.optional(),
  /** The pods' ServiceAccount; its token is never mounted. */
  service_account_name: DnsLabel.optional(),
  run_as_user: z.number().int().min(1).default(10001),
  /**
   * SIGTERM to SIGKILL. The runner drains for server.shutdown_grace + engine.stop_grace (33 s by
   * default) before it exits; the default leaves 10 s more, so Kubernetes does not cut turns short.
   */
  termination_grace_period: DurationMs('43s', true),
  storage: Storage.default({ type: 'emptyDir', size_limit: '10Gi' }),
  /** Size limits of the writable HOME (the CLI's ~/.claude) and /tmp emptyDirs. */
  home_size_limit: Quantity.default('1Gi'),
  tmp_size_limit: Quantity.default('1Gi'),
  node_selector: z.record(z.string(), z.string()).default({}),
  /** Kubernetes tolerations, passed through as written. */
  tolerations: z.array(z.record(z.string(), z.unknown())).default([]),
  /** Extra labels and annotations of every sandbox pod. */
  labels: z.record(z.string(), z.string()).default({}),
  annotations: z.record(z.string(), z.string()).default({}),
  /** An HTTP readiness endpoint of the runner; none = the pod is ready once its container runs. */
  readiness: z.strictObject({ port: z.number().int().min(1).max(65535), path: z.string().startsWith('/').default('/readyz') }).optional(),
})

export const ControllerConfigSchema = z.strictObject({
  /** Namespace of the sandbox pods and the lease; empty = POD_NAMESPACE, then the in-cluster namespace, then `default`. */
  kube_namespace: z.string().default(''),
  /** Names this pool in pod labels and pod names, so several installs can share a namespace. */
  pool: DnsLabel.max(40).default('agent-runtime'),
  /** Idle runner pods kept waiting for a session. */
  warm_pool: z.number().int().min(0).max(1000).default(2),
  /** Most sandbox pods at once (warm, cold and assigned); demand beyond it is refused. */
  max_pods: z.number().int().min(1).max(10_000).default(100),
  /** A pod not ready by then is deleted; a session waiting for it gets SANDBOX_NOT_READY. */
  pod_ready_timeout: DurationMs('2m'),
  /** A session idle this long loses its pod (0 = never). The next execute is placed on a fresh pod. */
  session_idle_timeout: DurationMs('30m', true),
  /** A pod made for one session that no runner claimed by then becomes an ordinary warm pod. */
  claim_timeout: DurationMs('1m'),
  /** Full reconcile (and orphan sweep) at least this often, whatever the watches say. */
  resync_interval: DurationMs('30s'),
  /**
   * Port of the probe and metrics server: /healthz, /readyz, /metrics (0 = any free port; served by
   * observability/controller-server.ts). Unset: no server. Env: CONTROLLER_HTTP_PORT. The chart sets 8081.
   */
  http_port: z.number().int().min(0).max(65535).optional(),
  leader_election: z
    .strictObject({
      enabled: z.boolean().default(true),
      lease_name: DnsLabel.default('agent-runtime-controller'),
      /** A leader that has not renewed for this long is replaced. */
      lease_duration: DurationMs('15s'),
      /** The leader renews this often; it steps down when renewals fail for lease_duration. */
      renew_interval: DurationMs('5s'),
    })
    .prefault({}),
  sandbox: Sandbox.prefault({}),
  /**
   * Per-session NATS credentials (README "Per-session credentials"): each sandbox pod gets, in a
   * Secret of its own, a credential that can only receive its assignment; the controller places
   * every session itself and hands the pod a credential for that session only. Needs NATS in
   * operator mode and the sandbox pods' `runner.placement: controller`. Unset: pods take sessions
   * from the placement queue with the runners' shared user.
   */
  session_credentials: z
    .strictObject({
      /** A file holding the account's signing key seed (`SA…`), e.g. a mounted Secret. */
      signing_key_file: z.string().min(1),
      /** The account's public key (`A…`) when the seed is one of its signing keys rather than the account key. */
      account: z
        .string()
        .regex(/^A[A-Z2-7]{55}$/, 'an account public key (A followed by 55 base-32 characters)')
        .optional(),
      /** Lifetime of a session credential; the controller renews it after two thirds. */
      ttl: DurationMs('1h'),
    })
    .optional(),
})

export type ControllerConfig = z.output<typeof ControllerConfigSchema>
export type ControllerConfigInput = z.input<typeof ControllerConfigSchema>
export type SandboxSettings = ControllerConfig['sandbox']
