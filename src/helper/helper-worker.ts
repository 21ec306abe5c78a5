/**
 * Starting the fresh worker of one environment (src/worker/main.ts), for both hosts of it: the
 * thread host (src/host/environments/thread/environment.ts `ThreadEnvironment`, a worker of the host's own process) and a
 * helper process, whose main thread hosts its one worker with `HelperWorker` below.
 *
 * The helper's host is small: the worker writes its run messages to the host itself and reads
 * most of the host's from a descriptor of its own (src/worker/channel.ts, inbox.ts), and the
 * host does every piece of process accounting from outside. What is left here is starting the
 * worker, passing on the runs the helper's main thread relays, telling apart the worker's `ready`
 * from what the program posts, and how the worker ended.
 */
import { setTimeout as sleep } from 'node:timers/promises'
import { MessageChannel, type MessagePort, Worker, receiveMessageOnPort } from 'node:worker_threads'
import type { HelperOptions } from '../protocol/frames.js'
import type { HelperChannel, HostMessage, WorkerData } from '../protocol/messages.js'
import type { PtcRunFailure } from '../seam/types.js'

/** Next to the bundle that starts it: dist/worker.cjs. */
const WORKER_FILE = new URL('./worker.cjs', import.meta.url)

/** How long disposal waits for a starting worker to finish loading before terminating it. */
export const READY_GRACE_MS = 2000

/**
 * A stdio chunk as Node's own worker code posts it; anything else would make the parent-side
 * stream emit an 'error' nobody handles.
 */
function isStdioChunk(entry: unknown): boolean {
  if (typeof entry !== 'object' || entry === null) return false
  const { chunk, encoding } = entry as { chunk?: unknown; encoding?: unknown }
  if (chunk === null || chunk instanceof Uint8Array) return true
  return typeof chunk === 'string' && typeof encoding === 'string' && Buffer.isEncoding(encoding)
}

/**
 * Node's own channel to a worker (its stdio and error reports) is reachable from inside the
 * worker through Node internals, and the Worker's handler for it throws an uncaught internal
 * assertion on a message type it does not know, or lets a stdio stream emit an unhandled
 * 'error' on a malformed chunk: a program could kill the host process with one postMessage.
 * The handler is wrapped per worker so that such a message counts as forged traffic of the run
 * instead. (Node names it `kOnMessage`; if a Node version does not, nothing is wrapped.)
 */
function guardInternalChannel(worker: Worker, forged: () => void): void {
  const handlers = Object.getPrototypeOf(worker) as Record<symbol, unknown>
  const key = Object.getOwnPropertySymbols(handlers).find((symbol) => symbol.description === 'kOnMessage')
  const handle = key === undefined ? undefined : handlers[key]
  if (key === undefined || typeof handle !== 'function') return
  Object.defineProperty(worker, key, {
    value(this: Worker, message: unknown) {
      const { type, stream, chunks } = (typeof message === 'object' && message !== null ? message : {}) as Record<string, unknown>
      const wellFormed = type !== 'stdioPayload' || ((stream === 'stdout' || stream === 'stderr') && Array.isArray(chunks) && chunks.every(isStdioChunk))
      if (!wellFormed) return forged()
      try {
        return handle.call(this, message)
      } catch {
        forged()
      }
    },
  })
}

/** What a worker is started with; `workerData` without its port. */
export type WorkerStart = Omit<WorkerData, 'port'> & { maxOldGenerationSizeMb: number }

/**
 * Starts a worker and returns it with the host's end of its private port. Node's internal
 * channel to it is guarded: a misuse of it reaches `forged`.
 */
export function startWorker(start: WorkerStart, forged: () => void): { worker: Worker; port: MessagePort } {
  const { maxOldGenerationSizeMb, ...data } = start
  const { port1, port2 } = new MessageChannel()
  const workerData: WorkerData = { ...data, port: port2 }
  const worker = new Worker(WORKER_FILE, {
    workerData,
    transferList: [port2],
    env: {},
    execArgv: ['--no-warnings'],
    resourceLimits: { maxOldGenerationSizeMb },
    // Not captured (`stdout: true` would hold the process open even when unref'd): only
    // writes that bypass the patched streams land here, and they go to the process's stdio.
    stdout: false,
    stderr: false,
  })
  guardInternalChannel(worker, forged)
  return { worker, port: port1 }
}

/** How a worker's exit reads to the model; `stopped` says why the host ended it, if it did. */
export function exitFailure(code: number, error: Error | undefined, stopped: string | undefined): PtcRunFailure {
  const errorCode = (error as { code?: string } | undefined)?.code
  const message = stopped ?? (errorCode === 'ERR_WORKER_OUT_OF_MEMORY'
    ? 'the program ran out of memory and its worker was stopped'
    : error
      ? `the program's worker crashed: ${error.message}`
      : `the program ended its worker (exit code ${code}) before completing`)
  return { kind: 'worker-exit', message }
}

/** What the helper's main thread hears from its worker. */
export interface HelperWorkerEvents {
  /**
   * Traffic the program forged: anything on the worker's port after `ready` (the worker writes
   * its own messages to the channel), or a misuse of Node's internal channel.
   */
  forged(): void
  /** The worker exited; `message` says how, for the model. */
  exit(message: string): void
}

/**
 * The one worker of a helper process. Its subprocesses are not tracked here: the worker reports
 * them to the host, which kills the helper's whole tree (or PID namespace) from outside.
 */
export class HelperWorker {
  /** Resolves once the worker has loaded its modules, or with how it ended if it exits first. */
  readonly ready: Promise<string | undefined>
  readonly exited: Promise<void>
  private readonly _worker: Worker
  private readonly _port: MessagePort
  private _events: HelperWorkerEvents | undefined
  private _exitCode: number | undefined
  private _error: Error | undefined

  constructor(options: HelperOptions, channel: HelperChannel, events: HelperWorkerEvents) {
    this._events = events
    let markReady!: (refusal: string | undefined) => void
    this.ready = new Promise((resolve) => (markReady = resolve))
    const forged = () => this._events?.forged()
    const { worker, port } = startWorker({ ...options, channel, sharesHostProcess: false }, forged)
    this._worker = worker
    this._port = port
    // Attached at spawn: `exit` can fire in the same tick as the worker's last message.
    this.exited = new Promise((resolve) => {
      worker.on('exit', (code) => {
        this._exitCode = code
        // Messages still queued on the port are read first, as the thread host does.
        for (let queued = receiveMessageOnPort(port); queued; queued = receiveMessageOnPort(port)) receive()
        port.close()
        const { message } = exitFailure(code, this._error, undefined)
        markReady(message)
        this._events?.exit(message)
        resolve()
      })
    })
    worker.on('error', (error) => {
      this._error = error
    })
    worker.on('message', forged)
    worker.on('messageerror', forged)
    // The worker's first message says its modules are loaded; it is never a program's (no
    // program has run yet). Whatever follows was posted by the program.
    let loaded = false
    const receive = () => {
      if (loaded) return forged()
      loaded = true
      markReady(undefined)
    }
    port.on('message', receive)
    port.on('messageerror', forged)
  }

  get alive(): boolean {
    return this._exitCode === undefined
  }

  /** Passes a host message on through the worker's port. */
  send(message: HostMessage): void {
    if (this.alive) this._port.postMessage(message)
  }

  /** Terminates the worker, once it has finished loading (or after a grace period), and waits for its exit. */
  async dispose(): Promise<void> {
    this._events = undefined
    // Terminating a worker while it still loads its modules leaks their file descriptors.
    await Promise.race([this.ready, this.exited, sleep(READY_GRACE_MS, undefined, { ref: false })])
    await this._worker.terminate()
    await this.exited
  }
}
