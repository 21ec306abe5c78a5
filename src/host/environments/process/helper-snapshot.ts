/**
 * The V8 startup snapshot a process tier's helper starts from: the environment's bundle with its
 * modules loaded and what they capture captured (src/worker/snapshot.ts), so a helper restores
 * that heap instead of loading and compiling them. Measured on Node 20, outside bubblewrap: 31.8
 * against 46.9 ms from spawn to `ready`.
 *
 * Made once per host process and heap size, in the background while a tier holds it: the
 * helpers that start before it is ready load the bundle as before. It is made by `node
 * --build-snapshot` under the helper's own V8 flags (V8 restores it only under those), in the
 * helpers' CPU group and memory limit, then proven by starting one helper from it to `ready`,
 * rehearsal included. It goes unused if either step fails, and from the moment the file is not
 * the one written (its inode, size and change time are compared at each start).
 *
 * The file lies in the host's private directory, readable by this user only; a confined helper
 * sees it through a read-only bind (confinement.ts), so no program can change what later helpers
 * restore. An unconfined program (`sandbox: 'none'`) can write whatever the host user can, this
 * file among them, as it can the package's own build.
 */
import { type ChildProcess, spawn } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import { chmodSync, rmSync, statSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { CHANNEL_FD, type HelperOptions } from '../../../protocol/frames.js'
import { helperCpuGroup } from '../../../system/cpu-group.js'
import { limitedCommand } from '../../../system/memory-limit.js'
import { privateDirectory } from '../../../system/private-directory.js'
import { helperCommand, helperFlags } from './helper-command.js'

const SNAPSHOT_ENTRY = fileURLToPath(new URL('./worker-snapshot.cjs', import.meta.url))

/** Making the snapshot takes about 0.3 s of CPU; the helpers' CPU group may delay it behind programs. */
const BUILD_TIMEOUT_MS = 60_000
/** The proving helper must be ready by then, as a helper must (environment.ts). */
const PROOF_TIMEOUT_MS = 30_000
/** Writable memory the builder may take beyond a helper's baseline, in MB. */
const BUILD_MEMORY_MB = 256
/** What the builder's stderr is kept of, to say why a build failed. */
const MAX_ERROR_TEXT = 2_000

/** One heap size's snapshot in this process. */
interface Snapshot {
  holders: number
  /** `building` until made and proven; `failed` is final for this process. */
  state: 'idle' | 'building' | 'ready' | 'failed'
  /** The builder or proving helper running now: killed when the last hold is released. */
  child?: ChildProcess
  file?: string
  /** The file as it was written: inode, size and change time. */
  identity?: string
  /** Why it is not used, once it failed. */
  problem?: string
}

const snapshots = new Map<number, Snapshot>()

function identity(file: string): string {
  const { ino, size, ctimeMs } = statSync(file)
  return `${ino}:${size}:${ctimeMs}`
}

/**
 * Holds the snapshot of helpers started with `options`' heap size from a tier's start to its
 * stop, making it if it is not made yet. The last release ends a build still running, and the
 * next hold starts it again.
 */
export function holdHelperSnapshot(options: Omit<HelperOptions, 'subprocessMarker'>, baselineKb: number): () => void {
  const size = options.maxOldGenerationSizeMb
  let snapshot = snapshots.get(size)
  if (!snapshot) snapshots.set(size, (snapshot = { holders: 0, state: 'idle' }))
  snapshot.holders++
  if (snapshot.state === 'idle') void make(snapshot, options, baselineKb)
  let held = true
  return () => {
    if (!held) return
    held = false
    if (--snapshot.holders === 0) snapshot.child?.kill('SIGKILL')
  }
}

/** The snapshot file helpers with this heap size start from, when it is ready and unchanged. */
export function helperSnapshot(maxOldGenerationSizeMb: number): string | undefined {
  const snapshot = snapshots.get(maxOldGenerationSizeMb)
  if (snapshot?.state !== 'ready') return undefined
  let current: string | undefined
  try {
    current = identity(snapshot.file!)
  } catch {
    // removed: not the file written either
  }
  if (current === snapshot.identity) return snapshot.file
  snapshot.state = 'failed'
  snapshot.problem = `${snapshot.file} changed after it was written`
  return undefined
}

/** Why the snapshot of this heap size is not used, once it failed; for tests and diagnostics. */
export function helperSnapshotProblem(maxOldGenerationSizeMb: number): string | undefined {
  return snapshots.get(maxOldGenerationSizeMb)?.problem
}

async function make(snapshot: Snapshot, options: Omit<HelperOptions, 'subprocessMarker'>, baselineKb: number): Promise<void> {
  snapshot.state = 'building'
  const file = path.join(privateDirectory(), `helper-${options.maxOldGenerationSizeMb}.snapshot`)
  const run = (command: string[], timeoutMs: number, ready?: (chunk: Buffer) => boolean) =>
    runChild(snapshot, limitedCommand(baselineKb, BUILD_MEMORY_MB, command, helperCpuGroup()), timeoutMs, ready)
  try {
    rmSync(file, { force: true })
    await run([process.execPath, ...helperFlags(options.maxOldGenerationSizeMb), '--snapshot-blob', file, '--build-snapshot', SNAPSHOT_ENTRY], BUILD_TIMEOUT_MS)
    chmodSync(file, 0o400)
    const written = identity(file)
    if (snapshot.holders === 0) throw new Error('released') // after the builder, before the proof
    // The proof is a helper like any other, with a marker of its own and no program.
    const proof = helperCommand({ ...options, subprocessMarker: randomUUID() }, file)
    await run(proof, PROOF_TIMEOUT_MS, (chunk) => chunk.includes('"type":"ready"'))
    snapshot.file = file
    snapshot.identity = written
    snapshot.state = 'ready'
  } catch (error) {
    rmSync(file, { force: true })
    // Ended by the last release: the next hold makes it again.
    const released = snapshot.holders === 0
    snapshot.state = released ? 'idle' : 'failed'
    if (!released) snapshot.problem = (error as Error).message
  }
}

/**
 * Runs `args` through the shell (limits, CPU group), as `snapshot`'s child, until it exits with
 * code 0, or until `ready` accepts a chunk it writes to the channel descriptor (it is then
 * killed). Rejects with what it wrote on stderr otherwise.
 */
function runChild(snapshot: Snapshot, args: string[], timeoutMs: number, ready?: (chunk: Buffer) => boolean): Promise<void> {
  return new Promise((resolve, reject) => {
    // A helper's descriptors: its channel, and its inbox (never written to here).
    const stdio = ready ? ['ignore', 'ignore', 'pipe', 'pipe', 'ignore', 'pipe'] as const : ['ignore', 'ignore', 'pipe'] as const
    const child = spawn('/bin/sh', args, { env: {}, stdio: [...stdio] })
    snapshot.child = child
    // Neither keeps the host's process alive: a host that exits meanwhile just never uses it.
    child.unref()
    for (const stream of child.stdio) (stream as { unref?: () => void } | null)?.unref?.()
    let stderr = ''
    let proven = false
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs).unref()
    child.stderr!.on('data', (chunk: Buffer) => {
      if (stderr.length < MAX_ERROR_TEXT) stderr += chunk.toString('utf8', 0, MAX_ERROR_TEXT - stderr.length)
    })
    for (const stream of child.stdio) stream?.on('error', () => undefined)
    child.stdio[CHANNEL_FD]?.on('data', (chunk: Buffer) => {
      if (proven || !ready!(chunk)) return
      proven = true
      child.kill('SIGKILL')
    })
    child.on('error', (error) => stderr += error.message)
    child.on('close', (code, signal) => {
      clearTimeout(timer)
      snapshot.child = undefined
      if (proven || (!ready && code === 0)) return resolve()
      const how = signal ? `was killed (${signal})` : `exited with code ${code}`
      reject(new Error(`the helper's startup snapshot ${ready ? 'could not start a helper' : 'could not be made'}: node ${how}${stderr ? `: ${stderr.trim()}` : ''}`))
    })
  })
}
