/**
 * A run's time budget: wall-clock time while its program runs, busy time while one of its calls
 * is held for a decision (see `holds.ts`).
 */

/** How often, at most, a suspended budget reads how busy its environment was. */
const CHECK_FLOOR_MS = 1000

/**
 * A run's time budget. While the program runs it is wall-clock time. While a call is held it is
 * the time its environment is busy (`Environment.busyMs`): a program that waits for the decision
 * spends none of it, however long the hold lasts; a program that computes, spins or floods while
 * its call is held spends it as it would unheld, and times out. A suspended budget is checked
 * when what is left would run out if the environment were busy all along, and at most once a
 * second, so an idle hold costs one read of the environment's busy time per budget, not a poll.
 */
export class TimeBudget {
  private _timer: NodeJS.Timeout | undefined
  private _endsAt = 0
  /** While suspended: what was left when the suspension began, and the busy time then. */
  private _left = 0
  private _busyAt = 0
  private _suspended = false

  constructor(
    private readonly _ms: number | null,
    private readonly _busy: () => number,
    private readonly _expire: () => void,
  ) {}

  start(): void {
    if (this._ms !== null) this._arm(this._ms)
  }

  suspend(): void {
    if (this._ms === null || this._suspended) return
    this._suspended = true
    clearTimeout(this._timer)
    this._left = this._endsAt - performance.now()
    this._busyAt = this._busy()
    this._check()
  }

  resume(): void {
    if (!this._suspended) return
    this._suspended = false
    clearTimeout(this._timer)
    const left = this._left - (this._busy() - this._busyAt)
    if (left <= 0) return this._expire()
    this._arm(left)
  }

  stop(): void {
    clearTimeout(this._timer)
  }

  private _arm(ms: number): void {
    this._endsAt = performance.now() + ms
    this._timer = setTimeout(this._expire, ms)
  }

  private readonly _check = (): void => {
    const charged = this._busy() - this._busyAt
    if (charged >= this._left) return this._expire()
    this._timer = setTimeout(this._check, Math.max(this._left - charged, CHECK_FLOOR_MS))
  }
}
