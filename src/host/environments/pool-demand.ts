/**
 * How many spare environments the pool keeps: `poolSize` while runs come no faster than the
 * pool refills, more while they come faster, and back to `poolSize` once they stop, never
 * holding more than the memory cap allows.
 *
 * A take that finds no started spare (a miss) means runs arrive faster than the pool refills:
 * the target doubles, so the next refill starts several spares at once. Started together, they
 * become ready together, and the runs that follow find one each without waiting (measured by
 * `npm run bench`, table `pool`). After a quiet spell the target halves, back down to `poolSize`.
 */

/** The target halves after this long without a miss or a take. */
export const SHRINK_AFTER_MS = 5_000

export interface PoolBounds {
  /** The spares kept whatever the demand (`poolSize`); 0 turns the pool off, growth included. */
  floor: number
  /** The most spares the memory cap allows (`poolMemoryMb` over one spare's memory), at least `floor`. */
  ceiling: number
}

/**
 * The pool's demand. Its state is read as fields (a take reads or sets them without a call into
 * this file); only a miss and a quiet spell change the target.
 */
export class PoolDemand {
  /** How many spares the pool should hold now. Set only here. */
  target: number
  /** Whether demand raised the target above `poolSize`. Set only here. */
  grown = false
  /** When a run last took a spare (`performance.now()`): the pool sets it at every take. */
  lastTake = 0

  constructor(private readonly _bounds: PoolBounds) {
    this.target = _bounds.floor
  }

  /** A run took a spare; `started` says whether one was ready for it (a take that found one needs only `lastTake` set). */
  took(started: boolean, now: number): void {
    this.lastTake = now
    if (started || this._bounds.floor === 0) return
    this._set(Math.min(this._bounds.ceiling, Math.max(this.target + 1, this.target * 2)))
  }

  /**
   * Called every SHRINK_AFTER_MS while the target is above the floor: true when it shrank
   * (nothing was taken for that long), so the pool can let spares go.
   */
  shrink(now: number): boolean {
    if (this.target <= this._bounds.floor || now - this.lastTake < SHRINK_AFTER_MS) return false
    this._set(Math.max(this._bounds.floor, Math.floor(this.target / 2)))
    return true
  }

  private _set(target: number): void {
    this.target = target
    this.grown = target > this._bounds.floor
  }
}
