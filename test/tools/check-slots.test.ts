/** Who gets the type check's next worker slot, without workers: the order is check-slots.ts's rule alone. */
import { describe, expect, it } from 'vitest'
import { CheckSlots } from '../../src/tools/check-slots.js'

const never = new Promise<never>(() => {})
const settled = () => new Promise((resolve) => setImmediate(resolve))

describe('CheckSlots', () => {
  it('gives a freed slot to a conversation whose checks stayed in bounds before ones whose checks overran, then in arrival order', async () => {
    const slots = new CheckSlots(2)
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
      const slots = new CheckSlots(1)
      await slots.take({}, never)
      for (let n = 0; n < 4; n++) void slots.take(owner, never)
      expect(slots.refusal(owner)).toBe(refusal)
      expect(slots.refusal({})).toBeUndefined()
    }
  })

  it('stops waiting when its stop comes first, leaving no slot taken', async () => {
    const slots = new CheckSlots(1)
    const first = {}
    await slots.take(first, never)
    expect(await slots.take({}, Promise.resolve('deadline'))).toBe('deadline')
    slots.give(first, false)
    expect(await slots.take({}, never)).toBeUndefined()
  })
})
