/**
 * A random hex id of `bytes` bytes. crypto.getRandomValues, not randomUUID:
 * a browser offers randomUUID only on secure pages (https, localhost), and
 * the console may be served over plain http on a private network.
 */
export function randomId(bytes: number): string {
  return Array.from(crypto.getRandomValues(new Uint8Array(bytes)), (byte) => byte.toString(16).padStart(2, '0')).join('')
}
