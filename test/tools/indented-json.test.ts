import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { indentedJson } from '../../src/tools/indented-json.js'
import { jsonValue } from '../json/arbitraries.js'
import type { PtcJsonValue } from 'ptc-runtime'

/** `depth` arrays, each holding the next. */
function nested(depth: number): PtcJsonValue {
  let value: PtcJsonValue = []
  for (let i = 0; i < depth; i++) value = [value]
  return value
}

describe('indentedJson', () => {
  it('writes what JSON.stringify(value, null, 2) writes, and its length', () => {
    fc.assert(
      fc.property(jsonValue, (value) => {
        const whole = JSON.stringify(value, null, 2)
        expect(indentedJson(value as PtcJsonValue, Infinity)).toEqual({ text: whole, length: whole.length })
      }),
      { numRuns: 1000 },
    )
  })

  it('stops at the length asked and counts the rest, at every cut', () => {
    const value = { a: [1, 'two', { three: [null, true] }], 'b "c"': {}, d: [], e: 'x'.repeat(30) }
    const whole = JSON.stringify(value, null, 2)
    for (let max = 0; max <= whole.length + 1; max++) {
      expect(indentedJson(value, max)).toEqual({ text: whole.slice(0, max), length: whole.length })
    }
  })

  it('cuts a value indented longer than any string can be, without writing it', () => {
    // 30 copies of 3 000 nested arrays: 180 KB of JSON, indented past the longest string V8 makes.
    const copies = (count: number) => Array.from({ length: count }, () => nested(3000))
    const two = JSON.stringify(copies(2), null, 2)
    const one = JSON.stringify(copies(1), null, 2).length
    const { text, length } = indentedJson(copies(30), 10_000)
    expect(text).toBe(two.slice(0, 10_000))
    // The length grows by one copy's indented text per copy.
    expect(length).toBe(one + 29 * (two.length - one))
    expect(length).toBeGreaterThan(2 ** 29)
  })
})
