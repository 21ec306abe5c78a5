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

export class PoolDemand {
  private _target: number
  private _lastTake = 0

  constructor(private readonly _bounds: PoolBounds) {
    this._target = _bounds.floor
  }

  /** How many spares the pool should hold now. */
  get target(): number {
    return this._target
  }

  /** Whether demand raised the target above `poolSize`. */
  get grown(): boolean {
    return this._target > this._bounds.floor
  }

  /** A run took a spare; `started` says whether one was ready for it. */
  took(started: boolean, now: number): void {
    this._lastTake = now
    if (started || this._bounds.floor === 0) return
    this._target = Math.min(this._bounds.ceiling, Math.max(this._target + 1, this._target * 2))
  }

  /**
   * Called every SHRINK_AFTER_MS while the target is above the floor: true when it shrank
   * (nothing was taken for that long), so the pool can let spares go.
   */
  shrink(now: number): boolean {
    if (this._target <= this._bounds.floor || now - this._lastTake < SHRINK_AFTER_MS) return false
    this._target = Math.max(this._bounds.floor, Math.floor(this._target / 2))
    return true
  }
}
