/**
 * The V8 startup snapshot a process tier's helper starts from: the environment's bundle with its
 * modules loaded and what they capture captured (src/worker/snapshot.ts), so a helper restores
 * that heap instead of loading and compiling them. Measured on Node 20, outside bubblewrap: 32.4
 * against 53.4 ms from spawn to `ready`. Node 22 to 26 fail the proof below (`PROOF_SOURCE`
 * says why): their helpers load the bundle.
 *
 * Made once per host process and heap size, in the background while a tier holds it: the
 * helpers that start before it is ready load the bundle as before. It is made by `node
 * --build-snapshot` under the helper's own V8 flags (V8 restores it only under those), in the
 * helpers' CPU group and memory limit, then proven by starting one helper from it to `ready`,
 * whose rehearsal starts a worker thread (`PROOF_SOURCE`). It goes unused if either step fails,
 * and from the moment the file is not the one written (its inode, size and change time are
 * compared at each start).
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
import type { ProgramCode } from '../../../protocol/messages.js'
import { helperCpuGroup } from '../../../system/cpu-group.js'
import { limitedCommand } from '../../../system/memory-limit.js'
import { privateDirectory } from '../../../system/private-directory.js'
import { lowerProgram } from '../../../transform/index.js'
import { helperCommand, helperFlags } from './helper-command.js'

const SNAPSHOT_ENTRY = fileURLToPath(new URL('./worker-snapshot.cjs', import.meta.url))

/** Making the snapshot takes about 0.3 s of CPU; the helpers' CPU group may delay it behind programs. */
const BUILD_TIMEOUT_MS = 60_000
/** The proving helper must be ready by then, as a helper must (environment.ts). */
const PROOF_TIMEOUT_MS = 30_000
/** Writable memory the builder may take beyond a helper's baseline, in MB. */
const BUILD_MEMORY_MB = 256

/**
 * What the proving helper runs before `ready`, in place of the rehearsal: a worker thread of the
 * program's that loads `child_process`. Node 22 to 26 abort a process restored from a userland
 * snapshot when one of its worker threads loads a stream binding (an assertion on
 * `IsolateData`'s templates; Node 20 does not), which would end the helper of any program doing so
 * where a helper that loads its bundle serves it. A worker that fails otherwise ends the proof too.
 */
const PROOF_SOURCE = `const { Worker } = await import('node:worker_threads')
const answer = await new Promise((resolve) => {
  const worker = new Worker("require('node:child_process'); require('node:worker_threads').parentPort.postMessage(process.cwd())", { eval: true })
  worker.once('message', resolve)
  worker.once('error', () => resolve(undefined))
})
if (typeof answer !== 'string') process.exit(70)`

let proof: ProgramCode | undefined

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
}

const snapshots = new Map<number, Snapshot>()

/** The file's inode, size and change time; `undefined` when it is gone. */
function identity(file: string): string | undefined {
  try {
    const { ino, size, ctimeMs } = statSync(file)
    return `${ino}:${size}:${ctimeMs}`
  } catch {
    return undefined
  }
}

/** The proof's program, lowered once. */
function proofProgram(): ProgramCode {
  if (!proof) {
    const { code, positions } = lowerProgram(PROOF_SOURCE, 'script')
    proof = { code, positions }
  }
  return proof
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
  if (identity(snapshot.file!) === snapshot.identity) return snapshot.file
  snapshot.state = 'failed' // changed after it was written
  return undefined
}

async function make(snapshot: Snapshot, options: Omit<HelperOptions, 'subprocessMarker'>, baselineKb: number): Promise<void> {
  snapshot.state = 'building'
  const file = path.join(privateDirectory(), `helper-${options.maxOldGenerationSizeMb}.snapshot`)
  const run = (command: string[], timeoutMs: number, ready?: (chunk: Buffer) => boolean) =>
    runChild(snapshot, limitedCommand(baselineKb, BUILD_MEMORY_MB, command, helperCpuGroup()), timeoutMs, ready)
  rmSync(file, { force: true })
  let written: string | undefined
  if (await run([process.execPath, ...helperFlags(options.maxOldGenerationSizeMb), '--snapshot-blob', file, '--build-snapshot', SNAPSHOT_ENTRY], BUILD_TIMEOUT_MS)) {
    chmodSync(file, 0o400)
    written = identity(file)
  }
  // No proof starts once the last hold was released; the proof is a helper like any other.
  const proof = helperCommand({ ...options, rehearsal: proofProgram(), subprocessMarker: randomUUID() }, file)
  if (written !== undefined && snapshot.holders > 0 && (await run(proof, PROOF_TIMEOUT_MS, (chunk) => chunk.includes('"type":"ready"')))) {
    snapshot.file = file
    snapshot.identity = written
    snapshot.state = 'ready'
    return
  }
  rmSync(file, { force: true })
  // Ended by the last release: the next hold makes it again. Otherwise this process never uses it.
  snapshot.state = snapshot.holders === 0 ? 'idle' : 'failed'
}

/**
 * Runs `args` through the shell (limits, CPU group), as `snapshot`'s child, until it exits, or
 * until `ready` accepts a chunk it writes to the channel descriptor (it is then killed). Whether
 * it exited with code 0, or was ready.
 */
function runChild(snapshot: Snapshot, args: string[], timeoutMs: number, ready?: (chunk: Buffer) => boolean): Promise<boolean> {
  return new Promise((resolve) => {
    // A helper's descriptors: its channel, and its inbox (never written to here).
    const stdio = ready ? ['ignore', 'ignore', 'ignore', 'pipe', 'ignore', 'pipe'] as const : 'ignore'
    const child = spawn('/bin/sh', args, { env: {}, stdio: typeof stdio === 'string' ? stdio : [...stdio] })
    snapshot.child = child
    // Neither keeps the host's process alive: a host that exits meanwhile just never uses it.
    child.unref()
    for (const stream of child.stdio) (stream as { unref?: () => void } | null)?.unref?.()
    let proven = false
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs).unref()
    for (const stream of child.stdio) stream?.on('error', () => undefined)
    child.stdio[CHANNEL_FD]?.on('data', (chunk: Buffer) => {
      if (proven || !ready!(chunk)) return
      proven = true
      child.kill('SIGKILL')
    })
    child.on('error', () => resolve(false))
    child.on('close', (code) => {
      clearTimeout(timer)
      snapshot.child = undefined
      resolve(ready ? proven : code === 0)
    })
  })
}
