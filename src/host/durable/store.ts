/**
 * Where a runtime records the durable tokens already resumed, so that each token resumes at
 * most once: a token is a bearer string, and without this the same approval could run its tool
 * again each time the token is presented. The runtime claims a token's id after checking the
 * token and before anything of its run starts; a claim that is refused, or that fails, refuses
 * the resume.
 */

/**
 * A store of spent durable tokens (`config.durableStore`). Give one store to every runtime that
 * may resume the same tokens (a table with a unique key, a Redis `SET NX`, ...): the default is
 * in the runtime's memory, so it holds within one runtime only.
 */
export interface PtcDurableStore {
  /**
   * Marks the token `tokenId` spent. Resolves `true` the first time an id is claimed and `false`
   * every later time, atomically (two claims at once: one `true`). `expiresAt` is when the token
   * expires anyway (ms since the epoch, from `durableTokenLifetimeMs`), after which the store
   * may forget the id; `null` when tokens do not expire. A rejection refuses the resume.
   */
  claim(tokenId: string, expiresAt: number | null): Promise<boolean>
}

const SWEEP_EVERY_MS = 60_000

/**
 * The default store: the ids claimed in this runtime, each kept until its token expires (for
 * the runtime's life when tokens do not expire: one short string per resumed token).
 */
export class MemoryDurableStore implements PtcDurableStore {
  private readonly _claimed = new Map<string, number | null>()
  /** When to look for expired ids next: once a minute at most, so claims stay cheap. */
  private _sweepAt = 0

  async claim(tokenId: string, expiresAt: number | null): Promise<boolean> {
    const now = Date.now()
    if (now >= this._sweepAt) this._sweep(now)
    if (this._claimed.has(tokenId)) return false
    this._claimed.set(tokenId, expiresAt)
    return true
  }

  private _sweep(now: number): void {
    for (const [id, expiresAt] of this._claimed) if (expiresAt !== null && expiresAt <= now) this._claimed.delete(id)
    this._sweepAt = now + SWEEP_EVERY_MS
  }
}
