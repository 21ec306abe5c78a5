/**
 * The helper process entry. The host starts it (under bubblewrap when the policy confines
 * files) with its working directory set to the run's cwd and a channel on descriptor 3. It
 * hosts exactly one environment: the same fresh Worker, with the same options, that the host
 * would create in-process, and relays between the worker's private port and the host.
 *
 * The helper shares a process with the program, so it is in the program's trust domain: the
 * host treats every frame as untrusted. What the helper adds is a process boundary (the host
 * survives whatever happens here), a real cwd, and subprocess bookkeeping in the helper's own
 * PID view, which the host cannot see into under a PID namespace.
 */
import { Socket } from 'node:net'
import { ThreadEnvironment } from '../host/environment.js'
import { sweepNamespace } from '../host/processes.js'
import { CHANNEL_FD, FrameReader, type HelperFrame, type HelperOptions, type HostFrame, encodeFrame } from './protocol.js'

const options = JSON.parse(process.argv[2] ?? '{}') as HelperOptions
const channel = new Socket({ fd: CHANNEL_FD, readable: true, writable: true })
const environment = new ThreadEnvironment({ ...options, inHelperProcess: true })
let closing = false

function send(frame: HelperFrame): void {
  if (!closing) channel.write(encodeFrame(frame))
}

const isSpawnReport = (raw: unknown): raw is { type: 'spawned'; pid: number } =>
  typeof raw === 'object' && raw !== null && (raw as { type?: unknown }).type === 'spawned' && typeof (raw as { pid?: unknown }).pid === 'number'

environment.attach({
  message(raw) {
    // Only this process can tell whether the pid is a process group the worker started:
    // under a PID namespace the host cannot even name it. A report for anything else is forged.
    if (isSpawnReport(raw) && !environment.adoptSubprocess(raw.pid)) return send({ type: 'forged' })
    let frame: string
    try {
      frame = encodeFrame({ type: 'message', message: raw })
    } catch {
      return send({ type: 'forged' }) // not JSON at all (a BigInt, a cycle): no genuine message is
    }
    if (!closing) channel.write(frame)
  },
  forged: () => send({ type: 'forged' }),
  rawOutput: (text) => send({ type: 'raw', text }),
  exit(code, error) {
    const errorCode = (error as { code?: unknown } | undefined)?.code
    send({
      type: 'exit',
      code,
      ...(typeof errorCode === 'string' ? { errorCode } : {}),
      ...(error ? { errorMessage: String(error.message) } : {}),
    })
  },
})

/** The host closed the channel (or vanished): end the worker and its subprocesses, then exit. */
function shutdown(): void {
  if (closing) return
  closing = true
  channel.destroy()
  void environment.dispose().finally(() => process.exit(0))
}

// Host frames are trusted, but the program can read from descriptor 3 too and tear a frame;
// a torn stream means the run can no longer be served, which the host hears as forgery.
const reader = new FrameReader(Number.POSITIVE_INFINITY)
channel.on('data', (chunk: Buffer) => {
  const frames = reader.push(chunk)
  if (!frames) return send({ type: 'forged' })
  for (const frame of frames as HostFrame[]) {
    if (frame.type === 'relay') environment.send(frame.message)
    else if (frame.type === 'kill-subprocesses') {
      void Promise.resolve(environment.killSubprocesses(frame.thorough === true)).then(async () => {
        if (!frame.sweep) return send({ type: 'killed', id: frame.id })
        // In the helper's own PID namespace, PID 1 is bubblewrap's reaper and the rest is the
        // program's, reported or not (a nested worker's subprocess, an emptied environment).
        send({ type: 'killed', id: frame.id, alone: await sweepNamespace([1, process.pid]) })
      })
    }
  }
})
channel.on('end', shutdown)
channel.on('error', shutdown)

send({ type: 'ready' })
