/**
 * `ThreadEnvironment`: the worker of one environment as a thread of this process
 * (`isolation: 'thread'`, and the worker inside every helper process). Disposal terminates the
 * worker, kills the subprocesses its programs started, and resolves once the worker has exited.
 */
import { randomUUID } from 'node:crypto'
import { setTimeout as sleep } from 'node:timers/promises'
import { MessageChannel, type MessagePort, Worker, receiveMessageOnPort } from 'node:worker_threads'
import type { HeapInfo } from 'node:v8'
import type { HelperChannel, HostMessage, ProgramCode } from '../protocol.js'
import type { ImageAttachmentRef, PtcRunFailure } from '../seam/types.js'
import { type Environment, type EnvironmentListener, type Refusal, deliver } from './environment.js'
import { type WatchedWorker, memoryWatch } from './memory-watch.js'
import { isSpawnReport } from './messages.js'
import { cpuMsOfTree, isChildOf, killProcessTrees } from './processes.js'

/** How long disposal waits for a starting worker to finish loading before terminating it. */
const READY_GRACE_MS = 2000

const WORKER_FILE = new URL('./worker.cjs', import.meta.url)

export interface ThreadEnvironmentOptions {
  maxOldGenerationSizeMb: number
  /** A lowered program the worker runs privately before it reports ready, to warm its code. */
  rehearsal?: ProgramCode
  /**
   * Set by a helper process, whose worker does not share the host's process: only there may
   * programs start nested workers, which escape the worker's guards.
   */
  inHelperProcess?: boolean
  /**
   * Set by a helper process: the worker writes its run messages to the host itself and reads
   * the host's from a descriptor of its own (src/worker/channel.ts, inbox.ts).
   */
  channel?: HelperChannel
  /** The marker every subprocess inherits; a helper passes the one its host chose. */
  subprocessMarker?: string
  /**
   * The budget the process-wide memory watch holds each run to (the thread host); a helper's
   * worker has none, the kernel holds the helper to it.
   */
  maxMemoryMb?: number
}

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

/** How a worker's exit reads to the model; `stopped` says why the host ended it, if it did. */
function exitFailure(code: number, error: Error | undefined, stopped: string | undefined): PtcRunFailure {
  const errorCode = (error as { code?: string } | undefined)?.code
  const message = stopped ?? (errorCode === 'ERR_WORKER_OUT_OF_MEMORY'
    ? 'the program ran out of memory and its worker was stopped'
    : error
      ? `the program's worker crashed: ${error.message}`
      : `the program ended its worker (exit code ${code}) before completing`)
  return { kind: 'worker-exit', message }
}

export class ThreadEnvironment implements Environment, WatchedWorker {
  readonly exited: Promise<void>
  /** Resolves once the worker has loaded its modules, or with its failure if it exits first. */
  readonly ready: Promise<Refusal | undefined>
  readonly issuedImages = new Map<string, ImageAttachmentRef>()
  readonly carried = new Set<string>()
  runs = 0
  private readonly _worker: Worker
  private readonly _port: MessagePort
  private readonly _subprocesses = new Set<number>()
  /**
   * The CPU time last read of each reported subprocess's tree: kept when it is gone (its time
   * then leaves /proc), so `busyMs` never goes back.
   */
  private readonly _subprocessCpu = new Map<number, number>()
  /** What the subprocesses of earlier tidies used, folded into one figure. */
  private _subprocessCpuDone = 0
  /** Every subprocess the program starts carries it in its environment (SUBPROCESS_MARKER_VARIABLE). */
  private readonly _marker: string
  /** A spawn was reported since the last kill: marked processes may exist. */
  private _spawned = false
  /**
   * Marked processes may appear that no report announces: a run ended while its program was
   * still running (blocked in a synchronous spawn, or spawning until terminated).
   */
  private _unannounced = false
  private _listener: EnvironmentListener | undefined
  private _exitCode: number | undefined
  private _error: Error | undefined
  /** The memory watch holds each run to it; a helper's worker is not watched (Infinity). */
  readonly budgetMb: number
  /** Why the host stopped the worker, when it did. */
  private _stopped: string | undefined

  constructor(options: ThreadEnvironmentOptions) {
    this._marker = options.subprocessMarker ?? randomUUID()
    this.budgetMb = options.maxMemoryMb ?? Number.POSITIVE_INFINITY
    let markReady!: (refusal: Refusal | undefined) => void
    this.ready = new Promise((resolve) => (markReady = resolve))
    const { port1, port2 } = new MessageChannel()
    this._port = port1
    this._worker = new Worker(WORKER_FILE, {
      workerData: {
        port: port2,
        channel: options.channel,
        rehearsal: options.rehearsal,
        sharesHostProcess: options.inHelperProcess !== true,
        subprocessMarker: this._marker,
      },
      transferList: [port2],
      env: {},
      execArgv: ['--no-warnings'],
      resourceLimits: { maxOldGenerationSizeMb: options.maxOldGenerationSizeMb },
      // Not captured (`stdout: true` would hold the process open even when unref'd): only
      // writes that bypass the patched streams land here, and they go to the host's stdio.
      stdout: false,
      stderr: false,
    })
    // Attached at spawn: `exit` can fire in the same tick as the worker's last message.
    this.exited = new Promise((resolve) => {
      this._worker.on('exit', (code) => {
        this._exitCode = code
        // 'exit' can overtake messages still queued on our port (a program that completes and
        // then calls process.exit): deliver them first, or its completion would be lost.
        for (let queued = receiveMessageOnPort(this._port); queued; queued = receiveMessageOnPort(this._port)) {
          receive(queued.message)
        }
        this._port.close()
        memoryWatch.running(this, false)
        markReady(this._exitFailure())
        this._listener?.exit(this._exitFailure())
        resolve()
      })
    })
    this._worker.on('error', (error) => {
      this._error = error
    })
    guardInternalChannel(this._worker, () => this._listener?.forged())
    this._worker.on('message', () => this._listener?.forged())
    this._worker.on('messageerror', () => this._listener?.forged())
    // The worker's first message says its modules are loaded; it is never a program's (no
    // program has run yet), and it is not passed on: a later 'ready' reaches the run as forged.
    // One listener for both, because adding a listener later would ref an unref'd port.
    let loaded = false
    const receive = (message: unknown) => {
      if (!loaded) {
        loaded = true
        return markReady(undefined)
      }
      if (this._listener) return deliver(this._listener, message)
      // No run is listening (between runs, or a run settled while its program kept going): a
      // subprocess reported now must still die with the environment.
      if (isSpawnReport(message)) this.adoptSubprocess(message.pid)
    }
    this._port.on('message', receive)
    this._port.on('messageerror', () => this._listener?.forged())
  }

  get alive(): boolean {
    return this._exitCode === undefined
  }

  attach(listener: EnvironmentListener | undefined): void {
    this._listener = listener
    if (listener && !this.alive) return listener.exit(this._exitFailure())
    if (Number.isFinite(this.budgetMb)) memoryWatch.running(this, listener !== undefined)
  }

  /** Heap plus external memory, sampled from outside (Node 22.16 and 24 onwards; Node 20 cannot). */
  async memoryInUse(): Promise<number | undefined> {
    const sample = (this._worker as { getHeapStatistics?: () => Promise<HeapInfo> }).getHeapStatistics
    if (sample === undefined) return undefined
    try {
      const statistics = await sample.call(this._worker)
      return statistics.used_heap_size + statistics.external_memory
    } catch {
      return undefined // the worker ended meanwhile
    }
  }

  stop(message: string): void {
    this._stopped ??= message
    void this._worker.terminate()
  }

  private _exitFailure(): PtcRunFailure {
    return exitFailure(this._exitCode!, this._error, this._stopped)
  }

  send(message: HostMessage, written?: () => void): void {
    if (!this.alive) return
    this._port.postMessage(message)
    written?.()
  }

  adoptSubprocess(pid: number): boolean {
    this._spawned = true
    const own = isChildOf(pid)
    if (own) this._subprocesses.add(pid)
    return own !== false
  }

  async tidy(thorough: boolean): Promise<boolean> {
    await this.killSubprocesses(thorough)
    return this.alive
  }

  /** Every spawn path a program has here is hooked or refused: nothing starts unreported. */
  async audit(): Promise<boolean> {
    return this.alive
  }

  /** Kills the recorded subprocesses and, when some may exist unreported, every marked one. */
  async killSubprocesses(thorough = false): Promise<void> {
    if (thorough) this._unannounced = true
    const pids = new Set(this._subprocesses)
    const search = this._unannounced || this._spawned
    this._subprocesses.clear()
    for (const cpu of this._subprocessCpu.values()) this._subprocessCpuDone += cpu
    this._subprocessCpu.clear()
    this._spawned = false
    // /proc is only searched when there may be something to find: it costs milliseconds.
    await killProcessTrees(pids, search ? this._marker : undefined)
  }

  busyMs(): number {
    let busy = 0
    try {
      busy = this._worker.performance.eventLoopUtilization().active
    } catch {
      // exited
    }
    // The worker's subprocesses are this process's children: what they use is read from /proc.
    for (const pid of this._subprocesses) this._subprocessCpu.set(pid, Math.max(this._subprocessCpu.get(pid) ?? 0, cpuMsOfTree(pid)))
    for (const cpu of this._subprocessCpu.values()) busy += cpu
    return busy + this._subprocessCpuDone
  }

  hold(held: boolean): void {
    if (held) {
      this._worker.ref()
      this._port.ref()
    } else {
      this._worker.unref()
      this._port.unref()
    }
  }

  async dispose(): Promise<void> {
    this._listener = undefined
    // Subprocesses die first, while the worker's event loop may still reap them.
    await this.killSubprocesses()
    // Terminating a worker while it still loads its modules leaks their file descriptors.
    // Held meanwhile: an idle pooled worker is unref'd and would otherwise let the host exit
    // with this disposal still pending.
    this.hold(true)
    await Promise.race([this.ready, this.exited, sleep(READY_GRACE_MS, undefined, { ref: false })])
    await this._worker.terminate()
    await this.exited
    // A program that kept running until terminate() may have started more subprocesses while
    // the first ones were being killed; their reports arrived since (or were drained at exit).
    // Nothing can reap them now, but they must not keep running.
    await this.killSubprocesses()
  }
}
