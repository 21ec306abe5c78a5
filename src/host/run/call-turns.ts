/**
 * A run's tool invocations, in turns of the host's thread. The calls a program makes together
 * reach the host in one message, and each starts its tool, with its argument's schema check, as
 * it is dispatched: 120 checks of a few ms each held the host's event loop 0.7 s in one turn
 * (red-team finding). So once one turn's invocations have taken SLICE_MS, the rest wait for the
 * next turn, in the order they came, and timers, I/O and other conversations get in between.
 */

/** The longest one run's invocations hold the host's thread in one turn before the rest yield. */
const SLICE_MS = 10

export class CallTurns {
  /** Invocations waiting for a later turn, from `_next` on. */
  private _waiting: Array<() => void> = []
  private _next = 0
  /** When this turn's first invocation started; undefined once the turn is over. */
  private _sliceStart: number | undefined
  private _closed = false

  /** Runs `invoke` now, or after the invocations already waiting, in a later turn. */
  run(invoke: () => void): void {
    if (this._closed) return
    if (this._next === this._waiting.length && this._withinSlice()) return invoke()
    this._waiting.push(invoke)
    if (this._waiting.length - this._next === 1) setImmediate(() => this._drain())
  }

  /** The run settled: what still waits never starts (its calls were recorded as aborted). */
  close(): void {
    this._closed = true
    this._waiting = []
    this._next = 0
  }

  private _withinSlice(): boolean {
    const now = performance.now()
    if (this._sliceStart === undefined) {
      this._sliceStart = now
      // Dispatching a message's calls is synchronous: its turn is over once its microtasks run.
      queueMicrotask(() => (this._sliceStart = undefined))
    }
    return now - this._sliceStart < SLICE_MS
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
