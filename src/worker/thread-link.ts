/**
 * How an environment running in a worker thread hears from its host: the thread tier's worker,
 * and the worker a stream tier's helper starts (src/helper/helper-worker.ts). What it was started
 * with arrives in `workerData`; its host's messages on a private port and, in a helper, most of
 * them on a descriptor of its own (inbox.ts).
 */
import { workerData } from 'node:worker_threads'
import type { HostMessage, ProgramCode, PythonSnapshot, ReadyMessage, WorkerData } from '../protocol/messages.js'
import { FORGED_FRAME } from '../protocol/frames.js'
import { writeFrame } from './channel.js'
import { readInbox } from './inbox.js'
import { endThread, post } from './intrinsics.js'
import { type Outbox, channelOutbox, portOutbox } from './outbox.js'

/** What the environment (environment.ts) needs of its host, whichever thread it runs in. */
export interface EnvironmentLink {
  /** Where a run's messages go. */
  readonly outbox: Outbox
  /** The environment shares the host's process (the thread tier), with the refusals that brings. */
  readonly sharesHostProcess: boolean
  readonly subprocessMarker: string
  /** The private program run before `ready` to warm the code (rehearsal.ts). */
  readonly rehearsal: ProgramCode | undefined
  /** A run's messages travel as frames on descriptors (a helper's), not on a port: the rehearsal warms that path. */
  readonly framed: boolean
  /** Python's snapshot, when the host handed one (src/worker/python.ts). */
  readonly pythonSnapshot: PythonSnapshot | undefined
  /** Starts handing the host's messages to `receive`, and tells the host the environment is ready. Once. */
  serve(receive: (message: HostMessage) => void): void
}

/** The link of a worker thread, from its `workerData`. */
export function workerThreadLink(): EnvironmentLink {
  // Taken out of workerData so a program cannot simply pick up the channel; the host still
  // treats everything on it as hostile, because a determined program can reach it anyway.
  const data = workerData as WorkerData
  const port = data.port!
  // In a helper process the worker writes its messages to the host itself (outbox.ts) and reads
  // most of the host's from a descriptor of its own (inbox.ts); `ready` still goes to the
  // helper's main thread, which starts serving the host then.
  const channel = data.channel
  const { rehearsal, pythonSnapshot } = data
  delete data.port
  delete data.channel
  delete data.rehearsal
  delete data.pythonSnapshot
  return {
    outbox: channel ? channelOutbox(channel.fd, channel.lock) : portOutbox(port),
    sharesHostProcess: data.sharesHostProcess,
    subprocessMarker: data.subprocessMarker,
    rehearsal,
    framed: channel !== undefined,
    pythonSnapshot,
    serve(receive) {
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
    },
  }
}
