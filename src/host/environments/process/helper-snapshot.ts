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
 * whose rehearsal starts a worker thread. If either step fails, this host process never uses it.
 *
 * The snapshot is an unnamed file (`O_TMPFILE`): no path names it, in this host's temporary
 * directory or any other, so nothing that can write there (another host's program whose
 * writable root holds that directory, say) can replace, change or redirect it. The host holds
 * its only descriptor and hands it to each helper as SNAPSHOT_FD, which Node reads through
 * `/proc/self/fd` as the process starts and the environment closes before any program runs. A
 * process of this user outside every sandbox (an unconfined program) can still reach it through
 * `/proc/<host>/fd`: the file's size and change time are compared before each start, and a
 * change turns the snapshot off for good.
 */
import { type ChildProcess, spawn } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import { closeSync, fchmodSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { CHANNEL_FD, type HelperOptions, SNAPSHOT_FD } from '../../../protocol/frames.js'
import { helperCpuGroup } from '../../../system/cpu-group.js'
import { limitedCommand } from '../../../system/memory-limit.js'
import { fileIdentity, unnamedFile } from '../../../system/unnamed-file.js'
import { privateScript } from '../../run/programs.js'
import { helperCommand, helperFlags } from './helper-command.js'

const SNAPSHOT_ENTRY = fileURLToPath(new URL('./worker-snapshot.cjs', import.meta.url))

/**
 * On the command line of the builder and of the proving helper (in its subprocess marker): what
 * tells them from the helpers that serve runs, for whoever counts a host's children.
 */
export const SNAPSHOT_CHILD_MARKER = 'ptc-startup-snapshot'

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


/** One heap size's snapshot in this process. */
interface Snapshot {
  holders: number
  /** `building` until made and proven; `failed` is final for this process. */
  state: 'idle' | 'building' | 'ready' | 'failed'
  /** The builder or proving helper running now: killed when the last hold is released. */
  child?: ChildProcess
  /** Resolves once that child has exited (it has then left the CPU group). */
  exited?: Promise<void>
  /** The host's descriptor of the unnamed file, once it is ready. */
  fd?: number
  /** The file's size and change time once made: any later change turns it off. */
  identity?: string
  /** The last release ended the build: a hold that comes before it has ended starts it again. */
  cancelled?: boolean
}

const snapshots = new Map<number, Snapshot>()

/** The proof's program. */
const proofProgram = privateScript(PROOF_SOURCE)

/**
 * Holds the snapshot of helpers started with `options`' heap size from a tier's start to its
 * stop, making it if it is not made yet. The last release ends a build still running, resolving
 * once its process has exited (it is in the helpers' CPU group, which is removed next), and the
 * next hold starts it again.
 */
export function holdHelperSnapshot(options: Omit<HelperOptions, 'subprocessMarker'>, baselineKb: number): () => Promise<void> {
  const size = options.maxOldGenerationSizeMb
  let snapshot = snapshots.get(size)
  if (!snapshot) snapshots.set(size, (snapshot = { holders: 0, state: 'idle' }))
  snapshot.holders++
  if (snapshot.state === 'idle') start(snapshot, options, baselineKb)
  let held = true
  return async () => {
    if (!held) return
    held = false
    if (--snapshot.holders > 0 || snapshot.state !== 'building') return
    snapshot.cancelled = true
    // Held by nothing else, the host could exit before hearing the exit it waits for.
    snapshot.child?.ref()
    snapshot.child?.kill('SIGKILL')
    await snapshot.exited
  }
}

function start(snapshot: Snapshot, options: Omit<HelperOptions, 'subprocessMarker'>, baselineKb: number): void {
  snapshot.state = 'building'
  snapshot.cancelled = false
  void make(snapshot, options, baselineKb).then(
    () => {
      // Ended by the last release: the next hold starts it again, or this one if it came meanwhile.
      if (snapshot.state !== 'idle' || snapshot.holders === 0) return
      start(snapshot, options, baselineKb)
    },
    () => {
      // Whatever went wrong only loses the snapshot: a host never fails for it.
      snapshot.state = 'failed'
    },
  )
}

/**
 * The host's descriptor of the snapshot helpers with this heap size start from, once it is
 * ready: to be given to the helper as SNAPSHOT_FD.
 */
export function helperSnapshot(maxOldGenerationSizeMb: number): number | undefined {
  const snapshot = snapshots.get(maxOldGenerationSizeMb)
  if (snapshot?.fd === undefined) return undefined
  if (fileIdentity(snapshot.fd) === snapshot.identity) return snapshot.fd
  // Changed since it was made (only a process of this user outside every sandbox can, through
  // /proc/<host>/fd), or the number leads elsewhere (a thread-tier program, in the host's process,
  // closed it): no helper starts from it, and it is forgotten, not closed, since the number may
  // now be another part of the host's.
  snapshot.fd = undefined
  snapshot.state = 'failed'
  return undefined
}

async function make(snapshot: Snapshot, options: Omit<HelperOptions, 'subprocessMarker'>, baselineKb: number): Promise<void> {
  // Writable by this user only while the builder writes it; read-only after.
  const fd = unnamedFile()
  const run = (command: string[], timeoutMs: number, ready?: (chunk: Buffer) => boolean) =>
    runChild(snapshot, limitedCommand(baselineKb, BUILD_MEMORY_MB, command, helperCpuGroup()), fd, timeoutMs, ready)
  let made = false
  try {
    const blob = `/proc/self/fd/${SNAPSHOT_FD}`
    if (await run([process.execPath, ...helperFlags(options.maxOldGenerationSizeMb), '--snapshot-blob', blob, '--build-snapshot', SNAPSHOT_ENTRY, SNAPSHOT_CHILD_MARKER], BUILD_TIMEOUT_MS)) {
      fchmodSync(fd, 0o400)
      snapshot.identity = fileIdentity(fd)
      // No proof starts once the last hold was released; the proof is a helper like any other.
      const command = helperCommand({ ...options, rehearsal: proofProgram(), subprocessMarker: `${SNAPSHOT_CHILD_MARKER}-${randomUUID()}` }, true)
      made = !snapshot.cancelled && (await run(command, PROOF_TIMEOUT_MS, (chunk) => chunk.includes('"type":"ready"'))) && fileIdentity(fd) === snapshot.identity
    }
  } finally {
    if (!made) closeSync(fd)
  }
  if (made) snapshot.fd = fd
  // Ended by the last release: made again at the next hold. Otherwise this process never uses it.
  snapshot.state = made ? 'ready' : snapshot.cancelled ? 'idle' : 'failed'
}

/**
 * Runs `args` through the shell (limits, CPU group), as `snapshot`'s child, with the snapshot's
 * `fd` as SNAPSHOT_FD, until it exits, or until `ready` accepts a chunk it writes to the channel
 * descriptor (it is then killed). Whether it exited with code 0, or was ready.
 */
function runChild(snapshot: Snapshot, args: string[], fd: number, timeoutMs: number, ready?: (chunk: Buffer) => boolean): Promise<boolean> {
  return new Promise((resolve) => {
    // A helper's descriptors: its channel, its inbox (never written to here), and the snapshot.
    const stdio = ['ignore', 'ignore', 'ignore', ready ? 'pipe' : 'ignore', 'ignore', ready ? 'pipe' : 'ignore', fd] as const
    const child = spawn('/bin/sh', args, { env: {}, stdio: [...stdio] })
    snapshot.child = child
    // A child that could not be started never exits: its 'error' ends the wait instead.
    snapshot.exited = new Promise((exited) => {
      child.once('exit', () => exited())
      child.once('error', () => exited())
    })
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
