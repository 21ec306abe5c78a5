/**
 * The host's budget for fetch answers (`maxHostFetchBytesInFlight`), which knows the environment
 * budgets charged against it. An answer's bytes are given back only once the reply carrying
 * them has been written to its environment, so a program that fetches its whole
 * `maxFetchBytesInFlight` and then stops reading (a busy loop) keeps them charged until its run
 * ends; eight such conversations held all of the host's 128 MiB for their whole time budgets, and
 * every other conversation's fetch was refused. So when a fetch is refused room in the host's
 * budget while its own environment holds no more than a fair share, the host ends the run of an
 * environment that holds more than its share in answers it left unread for at least
 * `UNREAD_HOLD_MS`, and tries again. A program that reads its answers as they come never holds
 * them that long, and is never ended.
 */
import { ByteBudget } from './byte-budget.js'

/**
 * How long an environment's oldest answer must have waited, complete and not yet written to
 * it, before its run may be ended for another's fetch: far longer than a program that awaits
 * its fetches takes to receive them, short against a run's time budget.
 */
export const UNREAD_HOLD_MS = 5_000

/** One environment's fetch answers in flight (`maxFetchBytesInFlight`), charged to the host's budget too. */
export class EnvironmentByteBudget extends ByteBudget {
  /** Complete answers not yet written to the environment, in the order they completed. */
  private readonly _waiting = new Set<{ since: number }>()
  /** Its run was ended to give its bytes back: it is not ended again. */
  ended = false

  /**
   * @param end ends the run of this environment, failing it with the message given
   * @param _holding the host's set of environments holding bytes, which this one joins and leaves
   */
  constructor(
    limit: number,
    option: string,
    readonly end: (message: string) => void,
    private readonly _holding: Set<EnvironmentByteBudget>,
  ) {
    super(limit, option)
  }

  override take(bytes: number): boolean {
    if (!super.take(bytes)) return false
    if (this.used > 0) this._holding.add(this)
    return true
  }

  override give(bytes: number): void {
    super.give(bytes)
    if (this.used === 0) this._holding.delete(this)
  }

  /** An answer is complete and waits to be written; call the returned function when it no longer does. */
  waiting(): () => void {
    const entry = { since: performance.now() }
    this._waiting.add(entry)
    return () => this._waiting.delete(entry)
  }

  /** When the oldest answer still waiting completed (sets keep insertion order), if one waits. */
  get waitingSince(): number | undefined {
    for (const entry of this._waiting) return entry.since
    return undefined
  }
}

/** The host's budget: a refused take may end an idle hog's run to make room (see the file's comment). */
export class HostByteBudget extends ByteBudget {
  /** Environments holding bytes now. */
  private readonly _holding = new Set<EnvironmentByteBudget>()

  constructor(
    limit: number,
    option: string,
    private readonly _holdMs = UNREAD_HOLD_MS,
  ) {
    super(limit, option)
  }

  /** A budget of `limit` bytes for one run's environment, whose run `end` ends. */
  environment(limit: number, option: string, end: (message: string) => void): EnvironmentByteBudget {
    return new EnvironmentByteBudget(limit, option, end, this._holding)
  }

  /**
   * Takes `bytes` for `taker`, which has already charged them to itself. When they would pass the
   * limit, ends idle hogs one at a time until they fit or none is left: each ended run closes
   * its calls at once, which gives back the bytes of its unwritten replies (`run/calls.ts`).
   */
  override take(bytes: number, taker?: EnvironmentByteBudget): boolean {
    if (super.take(bytes)) return true
    if (taker === undefined) return false
    for (let idle = this._idleHog(taker); idle !== undefined; idle = this._idleHog(taker)) {
      idle.hog.ended = true
      idle.hog.end(idle.message)
      if (super.take(bytes)) return true
    }
    return false
  }

  /**
   * The environment to end for `taker`: while `taker` holds no more than a fair share (the limit
   * over the environments holding bytes, itself included), one of the others holding more than
   * that share whose oldest unwritten answer has waited at least the hold time, the longest
   * waiting first, with the message its run fails with.
   */
  private _idleHog(taker: EnvironmentByteBudget): { hog: EnvironmentByteBudget; message: string } | undefined {
    const share = Math.floor(this.limit / (this._holding.size + (this._holding.has(taker) ? 0 : 1)))
    if (taker.used > share) return undefined
    const now = performance.now()
    let hog: EnvironmentByteBudget | undefined
    let oldest = Infinity
    for (const candidate of this._holding) {
      const since = candidate.waitingSince
      if (candidate === taker || candidate.ended || candidate.used <= share || since === undefined || now - since < this._holdMs) continue
      if (since < oldest) [hog, oldest] = [candidate, since]
    }
    if (hog === undefined) return undefined
    const seconds = ((now - oldest) / 1000).toFixed(1)
    const message = `the run held ${hog.used} bytes of fetch answers it had not read, the oldest for ${seconds} s, more than its share (${share} bytes) of the host's ${this.limit} (${this.option}), while another conversation's fetch needed room, so the run was ended; read each answer (await response.text(), .json() or .arrayBuffer()) before starting more fetches or long work`
    return { hog, message }
  }
}
