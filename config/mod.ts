/** Configuration: YAML file plus environment, validated once at start. */
export { loadConfig, resolveConfig, parseConfigText, ConfigError } from './load.ts'
export { ConfigSchema } from './schema.ts'
export type { Config, ConfigInput } from './schema.ts'
export { parseDuration } from './duration.ts'
