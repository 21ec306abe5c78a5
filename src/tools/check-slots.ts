/**
 * The type check's worker slots, and who gets the next one. A check holds its slot until it
 * ends or overruns a bound (`maxCheckMs`, the run's budget, the memory budget), so a type-level
 * bomb holds one for seconds. Ranking conversations by whether a check of theirs overran a
 * bound was not enough: bombs that end just under `maxCheckMs` never overrun, and eight
 * conversations sending them in a loop made another conversation's trivial program wait 14.5 to
 * 26.4 s of its 30 s budget, in arrival order behind them. So a freed slot goes to the waiting
 * check whose conversation used the checker least lately, less the time that check has waited:
 * the time its checks held a slot, halving every HALF_LIFE_MS, a running check counting its
 * time so far and one that overran a bound at least `maxCheckMs`. A conversation that has not
 * checked lately waits for one running check to end, however many conversations send bombs
 * (with the eight above, 1.2 to 3.6 s). The time waited counts against the time used, so new
 * conversations, which have used none, cannot starve one that checked before by arriving after
 * it (six sending a bomb each from a new conversation kept such a check waiting its whole 30 s).
 * A conversation may have only so many checks waiting. The first checks of new conversations are
 * not known as bombs: those that arrived before another conversation's check go before it once.
 */

/** Checks one conversation may have waiting at once; one more is refused. */
const MAX_WAITING_PER_OWNER = 4
/** A conversation's checker time counts half as much this long after it was used. */
const HALF_LIFE_MS = 30_000
/** The conversation of checks that name none: the tool cannot tell their callers apart, so they count as one. */
const NO_OWNER = {}

interface Waiter {
  owner: object
  /** When it began to wait. */
  since: number
  /** Set when a slot was handed to it. */
  handed: boolean
  wake: () => void
}

/** `slots` checks at once; the others wait for one, fairly by conversation. */
export class CheckSlots {
  private free: number
  /** Checks waiting for a slot, in arrival order. */
  private readonly waiting: Waiter[] = []
  /** When each of an owner's running checks took its slot. */
  private readonly running = new Map<object, number[]>()
  /** Each owner's ended checks' checker time (ms), decayed to `at`. */
  private readonly used = new WeakMap<object, { ms: number; at: number }>()

  /** `boundMs`: what a check that overran a bound counts at least (the tool's `maxCheckMs`). */
  constructor(slots: number, private readonly boundMs: number) {
    this.free = slots
  }

  /** Why `owner`'s check may not wait for a slot, or undefined. */
  refusal(owner: object | undefined): string | undefined {
    const key = owner ?? NO_OWNER
    if (this.free > 0 || this.waiting.filter((waiter) => waiter.owner === key).length < MAX_WAITING_PER_OWNER) return undefined
    // Without a stateOwner the deployer, not the model, can lift the bound: the text says how.
    const who = owner === undefined ? `Calls that name no conversation (no stateOwner) already have ${MAX_WAITING_PER_OWNER} programs waiting for their type check, the most they may have waiting together (typecheck: ${MAX_WAITING_PER_OWNER} per stateOwner; pass each conversation's stateOwner to the tool to tell them apart)` : `This conversation already has ${MAX_WAITING_PER_OWNER} programs waiting for their type check, the most one conversation may have waiting (typecheck: ${MAX_WAITING_PER_OWNER} per stateOwner)`
    return `${who}; nothing ran. Send the next program when one has finished.`
  }

  /** Resolves undefined once `owner` holds a slot, or with what `stop` resolved first: then it holds none. */
  async take<T>(owner: object | undefined, stop: Promise<T>): Promise<T | undefined> {
    const key = owner ?? NO_OWNER
    if (this.free > 0) {
      this.free--
      this.enter(key, performance.now())
      return undefined
    }
    const waiter: Waiter = { owner: key, since: performance.now(), handed: false, wake: () => {} }
    const handed = new Promise<undefined>((resolve) => {
      waiter.wake = () => resolve(undefined)
    })
    this.waiting.push(waiter)
    const stopped = await Promise.race([handed, stop])
    if (stopped === undefined) return undefined
    // A slot handed over as `stop` came goes on to the next waiter.
    if (waiter.handed) this.give(owner, false)
    else this.waiting.splice(this.waiting.indexOf(waiter), 1)
    return stopped
  }

  /** Frees `owner`'s slot; `overran`: its check ran out of a bound, and counts at least `boundMs`. */
  give(owner: object | undefined, overran: boolean): void {
    const key = owner ?? NO_OWNER
    const now = performance.now()
    // Which of the owner's checks ended does not change its total: the earliest.
    const starts = this.running.get(key)!
    const held = now - starts.shift()!
    if (starts.length === 0) this.running.delete(key)
    this.used.set(key, { ms: this.decayed(key, now) + (overran ? Math.max(held, this.boundMs) : held), at: now })
    // Least checker time, less the time the check has waited: new conversations, which have used
    // none, cannot keep one that checked before waiting for ever by arriving after it.
    let next: Waiter | undefined
    let least = { used: Infinity, holds: Infinity }
    for (const waiter of this.waiting) {
      const rank = { used: this.usage(waiter.owner, now) - (now - waiter.since), holds: this.running.get(waiter.owner)?.length ?? 0 }
      if (rank.used < least.used || (rank.used === least.used && rank.holds < least.holds)) [next, least] = [waiter, rank]
    }
    if (next === undefined) {
      this.free++
      return
    }
    this.waiting.splice(this.waiting.indexOf(next), 1)
    // Counted as the waiter's at once: its checker time runs from now.
    this.enter(next.owner, now)
    next.handed = true
    next.wake()
  }

  /** `owner`'s checker time lately: its ended checks', decayed, and its running checks' so far. */
  private usage(owner: object, now: number): number {
    return (this.running.get(owner) ?? []).reduce((sum, start) => sum + now - start, this.decayed(owner, now))
  }

  private decayed(owner: object, now: number): number {
    const used = this.used.get(owner)
    return used === undefined ? 0 : used.ms * 0.5 ** ((now - used.at) / HALF_LIFE_MS)
  }

  private enter(key: object, now: number): void {
    const starts = this.running.get(key)
    if (starts) starts.push(now)
    else this.running.set(key, [now])
  }
}
