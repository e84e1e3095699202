/** Reading the Prometheus text format in tests. */

/** The value of the sample `name{labels}` (labels matched as given, others ignored); undefined when absent. */
export function sample(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  for (const line of text.split('\n')) {
    if (line.startsWith('#')) continue
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)/.exec(line)
    if (!match || match[1] !== name) continue
    const found = parseLabels(match[2] ?? '')
    if (Object.entries(labels).every(([key, value]) => found[key] === value)) return Number(match[3])
  }
  return undefined
}

function parseLabels(text: string): Record<string, string> {
  const out: Record<string, string> = {}
  for (const [, key, value] of text.matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) out[key!] = value!.replace(/\\(.)/g, '$1')
  return out
}

/** GET /metrics of a service at `url` (with `headers`, e.g. an API key). */
export async function scrape(url: string, headers: Record<string, string> = {}): Promise<string> {
  const response = await fetch(`${url}/metrics`, { headers })
  if (response.status !== 200) throw new Error(`GET /metrics answered ${response.status}: ${await response.text()}`)
  return response.text()
}
