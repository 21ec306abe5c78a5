/**
 * The type check's worker slots, and who gets the next one. A check holds its slot until it
 * ends or overruns a bound (`maxCheckMs`, the run's budget, the memory budget), so a type-level
 * bomb holds one for the whole bound: four conversations sending bombs in turn kept both slots
 * and made another conversation's trivial program wait 22 s, six 28 s of its 30 s budget. So a
 * freed slot goes first to a conversation none of whose checks overran a bound lately, then to
 * one holding no slot, then in arrival order (9 s with four or six), and a conversation may
 * have only so many checks waiting. A conversation's first bomb is not known as one until it
 * overruns.
 */

/** Checks one conversation may have waiting at once; one more is refused. */
const MAX_WAITING_PER_OWNER = 4
/** How long after a check of its overran a bound a conversation's checks wait behind others'. */
const OVERRAN_MS = 60_000
/** The conversation of checks that name none: the tool cannot tell their callers apart, so they count as one. */
const NO_OWNER = {}

interface Waiter {
  owner: object
  /** Set when a slot was handed to it. */
  handed: boolean
  wake: () => void
}

/** `slots` checks at once; the others wait for one, fairly by conversation. */
export class CheckSlots {
  private free: number
  /** Checks waiting for a slot, in arrival order. */
  private readonly waiting: Waiter[] = []
  /** Slots held per owner. */
  private readonly holding = new Map<object, number>()
  /** When each owner's last check that overran a bound ended. */
  private readonly overran = new WeakMap<object, number>()

  constructor(slots: number) {
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
      this.enter(key)
      return undefined
    }
    const waiter: Waiter = { owner: key, handed: false, wake: () => {} }
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

  /** Frees `owner`'s slot; `overran`: its check ran out of a bound, so its next ones wait behind others'. */
  give(owner: object | undefined, overran: boolean): void {
    const key = owner ?? NO_OWNER
    const now = performance.now()
    if (overran) this.overran.set(key, now)
    this.leave(key)
    const rank = ({ owner: waiting }: Waiter) => (now - (this.overran.get(waiting) ?? -Infinity) < OVERRAN_MS ? 2 : 0) + (this.holding.has(waiting) ? 1 : 0)
    let next: Waiter | undefined
    for (const waiter of this.waiting) if (next === undefined || rank(waiter) < rank(next)) next = waiter
    if (next === undefined) {
      this.free++
      return
    }
    this.waiting.splice(this.waiting.indexOf(next), 1)
    // Counted as the waiter's at once, so a second slot freed in the same turn goes to another conversation.
    this.enter(next.owner)
    next.handed = true
    next.wake()
  }

  private enter(key: object): void {
    this.holding.set(key, (this.holding.get(key) ?? 0) + 1)
  }

  private leave(key: object): void {
    const left = this.holding.get(key)! - 1
    if (left === 0) this.holding.delete(key)
    else this.holding.set(key, left)
  }
}
