/**
 * The thread host's memory budget. A worker thread shares this process's memory, so no kernel
 * limit can hold one program to `maxMemoryMb`; instead, while runs are in progress, this watch
 * samples what each running worker holds (its V8 heap plus its external memory: array buffers,
 * Buffers and, on Node 24 and earlier, WebAssembly memories) and stops a worker over the budget.
 * Sampling works while the worker is busy in JavaScript: Node answers `getHeapStatistics()`
 * through an interrupt of the worker's isolate.
 *
 * What the samples cannot see (Node 20 lacks `getHeapStatistics()`; SharedArrayBuffers, and on
 * Node 26 WebAssembly memory, are left out of it) the process's RSS catches as a backstop: when
 * it grows by more than the budget per running program (plus a margin) above where it stood when
 * they started, every program then serving a run under a budget is stopped, since growth cannot
 * be told apart by thread (its message says how many; a kept environment between runs runs on).
 *
 * A sample is a few milliseconds behind the program, and a single native call (one `fill` of a
 * huge array) is not interrupted until it returns: the watch bounds memory, it does not make an
 * allocation fail. Only the process host (`isolation: 'process'`) makes the kernel refuse it.
 */

/** How often running workers are sampled. */
const SAMPLE_MS = 20
/** What the process may grow beyond the running programs' budgets before the backstop acts. */
const BACKSTOP_MARGIN_BYTES = 256 * 2 ** 20

/** A worker as the watch sees it: its budget, what it holds, and how to stop it. */
export interface WatchedWorker {
  /** Its `maxMemoryMb`. */
  readonly budgetMb: number
  /** Heap plus external memory in bytes; undefined where Node cannot say. */
  memoryInUse(): Promise<number | undefined>
  /** Ends the worker; its run fails as `worker-exit` with `message`. */
  stop(message: string): void
}

const MIB = 2 ** 20

/**
 * One watch for the whole process, whichever runtime a worker belongs to: the RSS it reads is
 * the process's, so the backstop must weigh every running worker's budget at once.
 */
class MemoryWatch {
  /** Running workers, with the process's RSS when each started. */
  private readonly _running = new Map<WatchedWorker, number>()
  /** Workers with a sample in flight: one that never answers (stuck in a native call) is not asked again. */
  private readonly _sampling = new Set<WatchedWorker>()
  private _timer: NodeJS.Timeout | undefined

  /** `worker` starts (true) or ends (false) serving a run. */
  running(worker: WatchedWorker, running: boolean): void {
    if (running) {
      if (!this._running.has(worker)) this._running.set(worker, process.memoryUsage.rss())
      this._timer ??= setInterval(() => this._sample(), SAMPLE_MS).unref()
      return
    }
    this._running.delete(worker)
    if (this._running.size === 0) {
      clearInterval(this._timer)
      this._timer = undefined
    }
  }

  private _sample(): void {
    if (this._backstop()) return
    for (const worker of this._running.keys()) {
      if (this._sampling.has(worker)) continue
      this._sampling.add(worker)
      void worker.memoryInUse().then((bytes) => {
        this._sampling.delete(worker)
        if (bytes === undefined || bytes <= worker.budgetMb * MIB || !this._running.has(worker)) return
        this.running(worker, false)
        worker.stop(`the program exceeded its memory budget of ${worker.budgetMb} MiB (maxMemoryMb) and its worker was stopped`)
      })
    }
  }

  /** Stops every running worker when the process grew past what their budgets allow; true if it did. */
  private _backstop(): boolean {
    const workers = [...this._running.keys()]
    const floor = Math.min(...this._running.values())
    const allowed = workers.reduce((sum, worker) => sum + worker.budgetMb * MIB, BACKSTOP_MARGIN_BYTES)
    const grown = process.memoryUsage.rss() - floor
    if (grown <= allowed) return false
    // Only the programs serving a run under a budget are stopped: say so, and how many, since
    // others in this process (between runs, or without a budget) run on.
    const others = workers.length - 1
    const stopped = others === 0 ? 'this program was stopped' : `this program and the ${others} other${others === 1 ? '' : 's'} running under a memory budget at that moment were stopped`
    for (const worker of workers) {
      this.running(worker, false)
      worker.stop(
        `the host process's memory grew by ${Math.round(grown / MIB)} MiB while this program ran, past the memory budget of ${worker.budgetMb} MiB (maxMemoryMb) ` +
          `per running program (${workers.length} ran under one) plus a margin of ${BACKSTOP_MARGIN_BYTES / MIB} MiB; ` +
          `on the thread host that growth cannot be told apart by program, so ${stopped} (isolation: 'process' holds each program to its own budget)`,
      )
    }
    return true
  }
}

export const memoryWatch = new MemoryWatch()
