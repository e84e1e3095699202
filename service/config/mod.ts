/** The service's configuration: YAML file plus environment, validated once at start into one Config. */
export { loadConfig, resolveConfig, parseConfigText, ConfigError } from './load.ts'
export { ConfigSchema } from './schema.ts'
export type { Config, ConfigInput } from './schema.ts'
export { engineList, observabilitySettings, securityOptions, stateSettings } from './slices.ts'
