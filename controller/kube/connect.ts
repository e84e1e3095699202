import { readFileSync } from 'node:fs'
import { KubeConfig } from '@kubernetes/client-node'

const SA_NAMESPACE_FILE = '/var/run/secrets/kubernetes.io/serviceaccount/namespace'

/** The cluster connection: in a pod its service account, else KUBECONFIG or ~/.kube/config. */
export function loadKubeConfig(): KubeConfig {
  const config = new KubeConfig()
  config.loadFromDefault()
  return config
}

/** A KubeConfig for one plain API server address (tests: the fake API server over http). */
export function kubeConfigFor(server: string): KubeConfig {
  const config = new KubeConfig()
  // client-node refuses plain http unless the cluster skips TLS verification.
  config.loadFromClusterAndUser({ name: 'fake', server, skipTLSVerify: true }, { name: 'fake' })
  return config
}

/** The namespace to work in: the configured one, else POD_NAMESPACE, the in-cluster namespace, the kubeconfig context's, `default`. */
export function resolveNamespace(
  configured: string,
  config: KubeConfig,
  env: NodeJS.ProcessEnv = process.env,
  readFile = (file: string) => readFileSync(file, 'utf8'),
): string {
  if (configured !== '') return configured
  if (env.POD_NAMESPACE) return env.POD_NAMESPACE
  try {
    const inCluster = readFile(SA_NAMESPACE_FILE).trim()
    if (inCluster !== '') return inCluster
  } catch {
    // not in a pod
  }
  return config.getContextObject(config.getCurrentContext())?.namespace ?? 'default'
}
