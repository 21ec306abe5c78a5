/**
 * The helper process entry (`isolation: 'process'`). The host starts one per environment, under
 * bubblewrap when a sandbox policy confines the program, with a memory limit set by the kernel
 * and a channel on descriptor 3. It hosts exactly one environment: the same fresh worker the
 * host would create in-process, and relays between the worker's private port and the host.
 * Before each run it moves to the run's cwd, so the program has a real working directory.
 *
 * The helper shares a process with the program, so it is in the program's trust domain: the
 * host treats every frame as untrusted and does its own process accounting from outside.
 */
import { Socket } from 'node:net'
import { ThreadEnvironment } from '../host/thread.js'
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
    // Only this process can tell whether the pid is a process the worker started: under a PID
    // namespace the host cannot even name it. A report for anything else is forged.
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
  exit: (failure) => send({ type: 'exit', message: failure.message }),
})

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
  for (const frame of frames as HostFrame[]) if (frame?.type === 'relay') relay(frame)
})
channel.on('end', shutdown)
channel.on('error', shutdown)

// Ready only once the worker can take a run: the host's readiness has one meaning.
void environment.ready.then((refusal) => (refusal ? send({ type: 'exit', message: refusal.message }) : send({ type: 'ready' })))
