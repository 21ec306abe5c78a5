/**
 * The helper process entry (`isolation: 'process'`). The host starts one per environment, under
 * bubblewrap when a sandbox policy confines the program, with a memory limit set by the kernel
 * and a channel on descriptor 3. It hosts exactly one environment: the same fresh worker the
 * host would create in-process. The worker talks to the host itself: it writes its messages to
 * the channel (src/worker/channel.ts) and reads most host messages from a descriptor of its own
 * (src/worker/inbox.ts); the frames are those of src/protocol/frames.ts, and the worker's host is
 * `HelperWorker` (worker-host.ts). This thread passes on only the runs whose cwd it must move to first,
 * so the program has a real working directory, and writes `ready`, the worker's exit and
 * forgery it sees.
 *
 * The helper shares a process with the program, so it is in the program's trust domain: the
 * host treats every frame as untrusted and does its own process accounting from outside.
 */
import { Socket } from 'node:net'
import { CHANNEL_FD, FrameReader, type HelperFrame, type HelperOptions, type HostFrame, INBOX_FD, encodeFrame, parseHostFrame } from '../protocol/frames.js'
import { createFrameLock, writeFrame } from '../worker/channel.js'
import { captureAtomics } from '../worker/intrinsics.js'
import { HelperWorker } from './helper-worker.js'

/** How long this thread waits for the worker to finish a frame before writing its own anyway. */
const LOCK_WAIT_MS = 5_000

captureAtomics()
const options = JSON.parse(process.argv[2] ?? '{}') as HelperOptions
const channel = new Socket({ fd: CHANNEL_FD, readable: true, writable: false })
const lock = createFrameLock()
let closing = false
// The worker's stdio is not captured here: what bypasses its streams reaches this process's own
// stdout and stderr, which the host reads.
const environment = new HelperWorker(options, { fd: CHANNEL_FD, lock, inbox: INBOX_FD }, {
  forged: () => send({ type: 'forged' }),
  exit: (message) => send({ type: 'exit', message }),
})

function send(frame: HelperFrame): void {
  if (closing) return
  try {
    // Once the worker is gone it never releases a lock it held.
    writeFrame(CHANNEL_FD, lock, encodeFrame(frame), environment.alive ? LOCK_WAIT_MS : 0)
  } catch {
    shutdown() // the host closed the channel
  }
}

/** The host closed the channel (or vanished): end the worker and its subprocesses, then exit. */
function shutdown(): void {
  if (closing) return
  closing = true
  channel.destroy()
  void environment.dispose().finally(() => process.exit(0))
}

function relay(frame: HostFrame): void {
  const { message } = frame
  // process.cwd() is Node's cached answer: a kept environment's runs mostly share one cwd.
  if (message.type === 'run' && process.cwd() !== message.cwd) {
    try {
      process.chdir(message.cwd)
    } catch (error) {
      const reason = (error as NodeJS.ErrnoException).code ?? 'it cannot be entered'
      return send({ type: 'refused', message: `the run's cwd ${message.cwd} cannot be entered in this environment (${reason})` })
    }
  }
  environment.send(message)
}

// Host frames are trusted, but the program can read from descriptor 3 too and tear a frame;
// a torn stream means the run can no longer be served, which the host hears as forgery.
const reader = new FrameReader(Number.POSITIVE_INFINITY)
channel.on('data', (chunk: Buffer) => {
  const frames = reader.push(chunk)
  if (!frames) return send({ type: 'forged' })
  for (const raw of frames) {
    const frame = parseHostFrame(raw)
    if (frame) relay(frame)
  }
})
channel.on('end', shutdown)
channel.on('error', shutdown)

// Ready only once the worker can take a run: the host's readiness has one meaning.
void environment.ready.then((refusal) => send(refusal === undefined ? { type: 'ready', cwd: process.cwd() } : { type: 'exit', message: refusal }))
