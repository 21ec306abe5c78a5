/**
 * A count of bytes the host holds on programs' behalf, against a limit named by the option that
 * sets it. The egress broker keeps one per environment and one for the whole host, and charges
 * each chunk of a response to both before it keeps the chunk.
 */

/** Bytes held against a limit; `take` refuses what would pass it, `give` returns what was taken. */
export class ByteBudget {
  private _used = 0

  /**
   * @param limit the most bytes held at once
   * @param option the configuration option that sets `limit`, named in every refusal
   */
  constructor(
    readonly limit: number,
    readonly option: string,
  ) {}

  /** Bytes held now. */
  get used(): number {
    return this._used
  }

  /** Takes `bytes` and returns true, or takes nothing and returns false when they would pass the limit. */
  take(bytes: number): boolean {
    if (this._used + bytes > this.limit) return false
    this._used += bytes
    return true
  }

  /** Takes `bytes` whatever the limit: for a floor a subclass keeps (host-budget.ts). */
  protected takeAnyway(bytes: number): void {
    this._used += bytes
  }

  /** Returns `bytes` taken earlier. */
  give(bytes: number): void {
    this._used -= bytes
  }
}
