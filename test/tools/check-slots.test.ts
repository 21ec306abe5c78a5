/** Who gets the type check's next worker slot, without workers: the order is check-slots.ts's rule alone. */
import { afterEach, describe, expect, it, vi } from 'vitest'
import { CheckSlots } from '../../src/tools/check-slots.js'

const never = new Promise<never>(() => {})
const settled = () => new Promise((resolve) => setImmediate(resolve))

describe('CheckSlots', () => {
  afterEach(() => {
    vi.useRealTimers()
  })

  /** Two slots on a clock the test moves; `wait` records who got one, in order. */
  function clocked() {
    vi.useFakeTimers({ toFake: ['performance'] })
    const slots = new CheckSlots(2, 10_000)
    const got: string[] = []
    const wait = (owner: object, label: string) => slots.take(owner, never).then(() => got.push(label))
    return { slots, got, wait }
  }

  it('gives a freed slot to a newcomer before a conversation whose checks took long without overrunning', async () => {
    const { slots, got, wait } = clocked()
    const [a, b, newcomer] = [{}, {}, {}]
    await slots.take(a, never)
    await slots.take(b, never)
    const waiting = [wait(a, 'a again'), wait(newcomer, 'newcomer')]
    // a's check took 9.9 s, just under maxCheckMs: it did not overrun, yet a used the checker most.
    vi.advanceTimersByTime(9_900)
    slots.give(a, false)
    await settled()
    expect(got).toEqual(['newcomer'])
    slots.give(b, false)
    await Promise.all(waiting)
    expect(got).toEqual(['newcomer', 'a again'])
  })

  it('counts a running check\'s time so far: one holding a slot 1 s goes before one that held one 6 s', async () => {
    const { slots, got, wait } = clocked()
    const [a, b, c] = [{}, {}, {}]
    await slots.take(b, never)
    await slots.take(c, never)
    vi.advanceTimersByTime(5_000)
    slots.give(c, false)
    await slots.take(a, never)
    vi.advanceTimersByTime(1_000)
    const waiting = [wait(b, 'b again'), wait(a, 'a again')]
    slots.give(b, false)
    await settled()
    expect(got).toEqual(['a again'])
    slots.give(a, false)
    await Promise.all(waiting)
  })

  it('forgets checker time used minutes ago', async () => {
    const { slots, got, wait } = clocked()
    const [a, b, filler] = [{}, {}, {}]
    await slots.take(filler, never)
    await slots.take(a, never)
    vi.advanceTimersByTime(10_000)
    slots.give(a, false)
    vi.advanceTimersByTime(300_000)
    await slots.take(b, never)
    vi.advanceTimersByTime(1_000)
    const waiting = [wait(b, 'b again'), wait(a, 'a again')]
    // a's 10 s, five minutes ago, now count for 10 ms: less than b's 1 s.
    slots.give(b, false)
    await settled()
    expect(got).toEqual(['a again'])
    slots.give(filler, false)
    await Promise.all(waiting)
  })

  it('counts the time a check waited against its conversation\'s checker time: new conversations arriving after it do not starve it', async () => {
    const { slots, got, wait } = clocked()
    const [checkedBefore, filler, bomber] = [{}, {}, {}]
    await slots.take(checkedBefore, never)
    await slots.take(filler, never)
    vi.advanceTimersByTime(200)
    slots.give(checkedBefore, false) // a trivial check: 200 ms of checker time
    await slots.take(bomber, never)
    const mine = wait(checkedBefore, 'checked before')
    // New conversations, each with no checker time, keep arriving after it, 100 ms apart from 300 ms on.
    vi.advanceTimersByTime(200)
    const others: Promise<unknown>[] = []
    for (let n = 0; n < 3; n++) {
      vi.advanceTimersByTime(100)
      others.push(wait({}, `new ${n}`))
    }
    // Its 200 ms used count as arriving 200 ms later, still before them all: the next slot is its.
    slots.give(bomber, false)
    await settled()
    expect(got).toEqual(['checked before'])
    slots.give(checkedBefore, false)
    slots.give(filler, false)
    await settled()
    await Promise.all([mine, ...others.slice(0, 2)])
    expect(got).toEqual(['checked before', 'new 0', 'new 1'])
  })

  it('counts a check that overran a bound as at least maxCheckMs, however soon it ended', async () => {
    const slots = new CheckSlots(2, 10_000)
    const [a, b, c, bystander] = [{}, {}, {}, {}]
    const got: string[] = []
    const wait = (owner: object, label: string) => slots.take(owner, never).then(() => got.push(label))
    await slots.take(a, never)
    await slots.take(b, never)
    const waiting = [wait(c, 'c'), wait(a, 'a again')]
    slots.give(a, true)
    await settled()
    // c has not overrun: it goes first.
    expect(got).toEqual(['c'])
    const late = wait(bystander, 'bystander')
    slots.give(b, true)
    slots.give(c, false)
    await Promise.all([...waiting, late])
    // a overran: the bystander, who came after it, goes before it.
    expect(got).toEqual(['c', 'bystander', 'a again'])
  })

  it('refuses a fifth waiting check of one conversation, and of no conversation, naming the rule', async () => {
    const refusals = new Map<object | undefined, string>([
      [{}, 'This conversation already has 4 programs waiting for their type check, the most one conversation may have waiting (typecheck: 4 per stateOwner); nothing ran. Send the next program when one has finished.'],
      [undefined, 'Calls that name no conversation (no stateOwner) already have 4 programs waiting for their type check, the most they may have waiting together (typecheck: 4 per stateOwner; pass each conversation\'s stateOwner to the tool to tell them apart); nothing ran. Send the next program when one has finished.'],
    ])
    for (const [owner, refusal] of refusals) {
      const slots = new CheckSlots(1, 10_000)
      await slots.take({}, never)
      for (let n = 0; n < 4; n++) void slots.take(owner, never)
      expect(slots.refusal(owner)).toBe(refusal)
      expect(slots.refusal({})).toBeUndefined()
    }
  })

  it('stops waiting when its stop comes first, leaving no slot taken', async () => {
    const slots = new CheckSlots(1, 10_000)
    const first = {}
    await slots.take(first, never)
    expect(await slots.take({}, Promise.resolve('deadline'))).toBe('deadline')
    slots.give(first, false)
    expect(await slots.take({}, never)).toBeUndefined()
  })
})
