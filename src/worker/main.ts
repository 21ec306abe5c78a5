/**
 * The worker entry: runs inside every environment. It owns the globals the runtime provides
 * (`console`, `inspect`, `Image`, the binding namespaces) and evaluates one run at a time.
 * Everything it needs is captured before any program runs.
 */
import { workerData } from 'node:worker_threads'
import type { HostMessage, ReadyMessage, WorkerData } from '../protocol/messages.js'
import { createProgramState } from '../transform/hooks.js'
import { createConsole } from './console.js'
import { Image, createInspect } from './images.js'
import { dataProperty, defineProperty, endThread, post, realmGlobal } from './intrinsics.js'
import { FORGED_FRAME } from '../protocol/frames.js'
import { writeFrame } from './channel.js'
import { readInbox } from './inbox.js'
import { channelOutbox, portOutbox } from './outbox.js'
import { rehearse } from './rehearsal.js'
import { WorkerRun } from './run.js'
import { describeThrown, installStackFormatter } from './stack.js'
import { captureProcessStreams, resetProcessStreams } from './streams.js'
import { installProcessWorld, setWorkingDirectory } from './world.js'

// Taken out of workerData so a program cannot simply pick up the channel; the host still
// treats everything on it as hostile, because a determined program can reach it anyway.
const data = workerData as WorkerData
const port = data.port!
const sharesHostProcess = data.sharesHostProcess
const rehearsal = data.rehearsal
// In a helper process the worker writes its messages to the host itself (outbox.ts) and reads
// most of the host's from a descriptor of its own (inbox.ts); `ready` still goes to the
// helper's main thread, which starts serving the host then.
const channel = data.channel
const outbox = channel ? channelOutbox(channel.fd, channel.lock) : portOutbox(port)
delete data.port
delete data.channel
delete data.rehearsal
const state = createProgramState()
let current: WorkerRun | undefined

// Output and spawns always go to the run in progress; between runs they are dropped.
const sink = {
  text: (text: string) => current?.output.text(text),
  image: (id: string, bytes: number) => current?.output.image(id, bytes),
}
const programConsole = createConsole(captureProcessStreams(sink))
const inspect = createInspect(sink)

installStackFormatter()
installProcessWorld((pid) => current?.spawned(pid), {
  sharesHostProcess,
  subprocessMarker: data.subprocessMarker,
})

process.on('unhandledRejection', (reason) => {
  current?.fail('exception', `Unhandled promise rejection: ${describeThrown(reason)}`)
})
process.on('uncaughtException', (error) => {
  current?.fail('exception', describeThrown(error))
})

function installRuntimeGlobals(): void {
  // Not a for-of: an earlier program of a retained environment may have replaced the array iterator.
  defineProperty(realmGlobal, 'console', dataProperty(programConsole, false, true, true))
  defineProperty(realmGlobal, 'inspect', dataProperty(inspect, false, true, true))
  defineProperty(realmGlobal, 'Image', dataProperty(Image, false, true, true))
}

function receive(message: HostMessage): void {
  if (message.type !== 'run') return current?.receive(message)
  resetProcessStreams()
  current = new WorkerRun(outbox, message, sharesHostProcess)
  setWorkingDirectory(message.cwd)
  installRuntimeGlobals()
  void current.execute(state)
}

function serve(): void {
  // eslint-disable-next-line hostile-realm/captured-builtins -- called once, before any program runs
  port.on('message', receive)
  if (channel) readInbox(channel.inbox, receive, () => writeFrame(channel.fd, channel.lock, FORGED_FRAME))
  // A program that closed the channel (it can reach it) made this environment unreachable: end
  // it now, rather than leave it to hold the runs sent to it until their deadlines.
  // eslint-disable-next-line hostile-realm/captured-builtins -- called once, before any program runs
  port.once('close', () => endThread())
  // Every module is loaded: the host may now terminate this worker without leaking the file
  // handles of a load in progress.
  post(port, { type: 'ready' } satisfies ReadyMessage)
}

// Host messages wait in the port's queue until the rehearsal is over.
if (rehearsal) {
  void rehearse(rehearsal, (run) => {
    current = run
    if (run) installRuntimeGlobals()
  }).then(serve, serve) // a failed rehearsal only loses the warm-up
} else {
  serve()
}
