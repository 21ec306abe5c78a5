/**
 * `ThreadEnvironment`: the worker of one environment as a thread of this process
 * (`isolation: 'thread'`; a helper process hosts its worker with src/helper/helper-worker.ts,
 * which also starts this one). Disposal terminates the worker, kills the subprocesses its
 * programs started, and resolves once the worker has exited.
 */
import { randomUUID } from 'node:crypto'
import { setTimeout as sleep } from 'node:timers/promises'
import { type MessagePort, type Worker, receiveMessageOnPort } from 'node:worker_threads'
import type { HeapInfo } from 'node:v8'
import { READY_GRACE_MS, exitFailure, startWorker } from '../../../helper/helper-worker.js'
import type { HostMessage, ProgramCode } from '../../../protocol/messages.js'
import type { PtcRunFailure } from '../../../seam/types.js'
import { threadSnapshot } from '../../../python/snapshot.js'
import type { Environment, EnvironmentListener, Refusal } from '../environment.js'
import { type WatchedWorker, memoryWatch } from './memory-watch.js'
import { asTeardown } from '../../../system/turns.js'
import { type FrameBudget, lineLimits } from '../../connection/frame-bounds.js'
import { MessageInflow } from '../../connection/message-inflow.js'
import { deliver, spawnReport } from '../../connection/connection.js'
import { cpuMsOfTree, isChildOf, killProcessTrees } from '../../../system/process-sweep.js'

export interface ThreadEnvironmentOptions {
  maxOldGenerationSizeMb: number
  /** A lowered program the worker runs privately before it reports ready, to warm its code. */
  rehearsal?: ProgramCode
  /** The budget the process-wide memory watch holds each run to. */
  maxMemoryMb?: number
  /** The budgets the worker's messages are read within (frame-bounds.ts). */
  frameBudget: FrameBudget
}

export class ThreadEnvironment implements Environment, WatchedWorker {
  readonly exited: Promise<void>
  /** Resolves once the worker has loaded its modules, or with its failure if it exits first. */
  readonly ready: Promise<Refusal | undefined>
  /** Disposal kills only the reported subprocesses: a program that may still run is searched for first. */
  readonly disposalSearches = false
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
  /** The memory watch holds each run to it (Infinity: not watched). */
  readonly budgetMb: number
  /** Why the host stopped the worker, when it did. */
  private _stopped: string | undefined
  /** The worker has loaded its modules: terminating it leaks nothing. */
  private _loaded = false
  /** The worker's messages, read within the run's bounds. */
  private readonly _inflow: MessageInflow

  constructor(options: ThreadEnvironmentOptions) {
    this._marker = randomUUID()
    this.budgetMb = options.maxMemoryMb ?? Number.POSITIVE_INFINITY
    let markReady!: (refusal: Refusal | undefined) => void
    this.ready = new Promise((resolve) => (markReady = resolve))
    const python = threadSnapshot()
    const { worker, port } = startWorker(
      {
        maxOldGenerationSizeMb: options.maxOldGenerationSizeMb,
        rehearsal: options.rehearsal,
        sharesHostProcess: true,
        subprocessMarker: this._marker,
        ...(python ? { pythonSnapshot: python } : {}),
      },
      () => this._listener?.forged(),
    )
    this._worker = worker
    this._port = port
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
        // A long message may still be read in slices: the exit comes after it.
        inflow.afterwards(() => {
          markReady(this._exitFailure())
          this._listener?.exit(this._exitFailure())
          resolve()
        })
      })
    })
    this._worker.on('error', (error) => {
      this._error = error
    })
    this._worker.on('message', () => this._listener?.forged())
    this._worker.on('messageerror', () => this._listener?.forged())
    // The worker's first message says its modules are loaded; it is never a program's (no
    // program has run yet), and it is not passed on: a later 'ready' reaches the run as forged.
    // One listener for both, because adding a listener later would ref an unref'd port.
    // The worker posts JSON text (src/worker/outbox.ts), read within the run's budgets as the
    // helper tiers read their frames; anything else on the port was posted by the program.
    const inflow = (this._inflow = new MessageInflow(lineLimits('message', options.frameBudget), (message) => {
      if (this._listener) return deliver(this._listener, message)
      // No run is listening (between runs, or a run settled while its program kept going): a
      // subprocess reported now must still die with the environment.
      const pid = spawnReport(message)
      if (pid !== undefined) this.adoptSubprocess(pid)
    }, (why) => (why === undefined ? this._listener?.forged() : this._listener?.violation(why))))
    const receive = (posted: unknown) => {
      if (!this._loaded) {
        this._loaded = true
        return markReady(undefined)
      }
      inflow.post(posted)
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

  /**
   * Runtime disposal's first step, for every environment in the same tick: the loaded worker of
   * a run whose program reported no subprocess is terminated at once (a spinning program's
   * thread competes with the host's own as an equal), and `dispose()` follows. One that reported
   * some is left to `dispose()`, which kills them while the worker's event loop can still reap
   * them; an idle one takes no CPU.
   */
  end(): void {
    const quiet = this._subprocesses.size === 0 && !this._spawned && !this._unannounced
    if (this._listener && this._loaded && this.alive && quiet) void this._worker.terminate()
  }

  async dispose(): Promise<void> {
    this._listener = undefined
    // Nothing the worker sends matters now, but a subprocess it reported in what is dropped
    // must still be found: by its marker.
    if (this._inflow.close()) this._unannounced = true
    // Subprocesses die first, while the worker's event loop may still reap them.
    await this.killSubprocesses()
    // Terminating a worker while it still loads its modules leaks their file descriptors.
    // Held meanwhile: an idle pooled worker is unref'd and would otherwise let the host exit
    // with this disposal still pending.
    this.hold(true)
    await Promise.race([this.ready, this.exited, sleep(READY_GRACE_MS, undefined, { ref: false })])
    // A few at a time: each worker's end costs the host's thread its join (turns.ts).
    await asTeardown(async () => {
      await this._worker.terminate()
      await this.exited
    })
    // A program that kept running until terminate() may have started more subprocesses while
    // the first ones were being killed; their reports arrived since (or were drained at exit).
    // Nothing can reap them now, but they must not keep running.
    await this.killSubprocesses()
  }
}
