/**
 * A run's tool invocations, in turns of the host's thread. The calls a program makes together
 * reach the host in one message, and each starts its tool, with its argument's schema check, as
 * it is dispatched: 120 checks of a few ms each held the host's event loop 0.7 s in one turn
 * (red-team finding). So once one turn's invocations have taken SLICE_MS, the rest wait for the
 * next turn, in the order they came, and timers, I/O and other conversations get in between.
 */

/** The longest the runs' invocations hold the host's thread in one turn before the rest yield. */
const SLICE_MS = 10

/**
 * When this turn's first invocation started, whichever run's; undefined once the turn is over.
 * One for the host: several runs, or one run's calls in many messages (a port delivers up to a
 * thousand in one callback, with microtasks between them), share a turn's slice.
 */
let sliceStart: number | undefined

function withinSlice(): boolean {
  const now = performance.now()
  if (sliceStart === undefined) {
    sliceStart = now
    // A fresh immediate runs in the next iteration of the event loop: the turn is over by then.
    setImmediate(() => (sliceStart = undefined))
  }
  return now - sliceStart < SLICE_MS
}

export class CallTurns {
  /** Invocations waiting for a later turn, from `_next` on. */
  private _waiting: Array<() => void> = []
  private _next = 0
  private _closed = false

  /** Runs `invoke` now, or after the invocations already waiting, in a later turn. */
  run(invoke: () => void): void {
    if (this._closed) return
    if (this._next === this._waiting.length && withinSlice()) return invoke()
    this._waiting.push(invoke)
    if (this._waiting.length - this._next === 1) setImmediate(() => this._drain())
  }

  /** The run settled: what still waits never starts (its calls were recorded as aborted). */
  close(): void {
    this._closed = true
    this._waiting = []
    this._next = 0
  }

  private _drain(): void {
    const until = performance.now() + SLICE_MS
    while (!this._closed && this._next < this._waiting.length) {
      this._waiting[this._next++]!()
      if (this._next < this._waiting.length && performance.now() >= until) {
        setImmediate(() => this._drain())
        return
      }
    }
    this._waiting = []
    this._next = 0
  }
}
