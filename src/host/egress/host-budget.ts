/**
 * The host's budget for fetch answers (`maxHostFetchBytesInFlight`), with a floor every
 * environment keeps. An answer's bytes are given back only once the reply carrying them has been
 * written to its environment, so conversations that fetch their whole `maxFetchBytesInFlight`
 * and then stop reading (a busy loop, or a server that stalls before the last byte) hold the
 * host's budget until their runs end: eight of them held all 128 MiB, and every other
 * conversation's fetch was refused. Ending such runs to make room was tried and set aside: a
 * stalled answer never looked idle, and a legitimate conversation reading its answers one by one
 * was ended, losing its state, while the attackers went on. So the host's budget refuses nothing
 * an environment takes within its first FETCH_FLOOR_BYTES: a conversation's ordinary fetches go on
 * however full the budget is, and the host holds at most that much more per environment, each of
 * which costs the host far more as a process or a worker.
 */
import { ByteBudget } from './byte-budget.js'

/** Answer bytes each environment may hold whatever the host's budget holds: a JSON API's answers fit. */
export const FETCH_FLOOR_BYTES = 1024 * 1024

export class HostByteBudget extends ByteBudget {
  /**
   * Takes `bytes` for `taker` (whose own budget already holds them), past the limit when
   * `taker` then holds no more than FETCH_FLOOR_BYTES.
   */
  override take(bytes: number, taker?: ByteBudget): boolean {
    if (super.take(bytes)) return true
    if (taker === undefined || taker.used > FETCH_FLOOR_BYTES) return false
    this.takeAnyway(bytes)
    return true
  }
}
