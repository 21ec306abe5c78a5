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
  it('writes what JSON.stringify(value, null, 2) writes', () => {
    fc.assert(
      fc.property(jsonValue, (value) => {
        expect(indentedJson(value as PtcJsonValue, Infinity)).toEqual({ text: JSON.stringify(value, null, 2), complete: true })
      }),
      { numRuns: 1000 },
    )
  })

  it('stops at the length asked, at every cut', () => {
    const value = { a: [1, 'two', { three: [null, true] }], 'b "c"': {}, d: [], e: 'x'.repeat(30) }
    const whole = JSON.stringify(value, null, 2)
    for (let max = 0; max <= whole.length + 1; max++) {
      expect(indentedJson(value, max)).toEqual({ text: whole.slice(0, max), complete: max >= whole.length })
    }
  })

  it('never reads past the cut', () => {
    const unread = () => {
      throw new Error('read past the cut')
    }
    const record = Object.defineProperty({ a: 'x'.repeat(100) }, 'b', { get: unread, enumerable: true }) as PtcJsonValue
    expect(indentedJson(record, 50)).toEqual({ text: `{\n  "a": "${'x'.repeat(40)}`, complete: false })
    const list = Object.defineProperty(['x'.repeat(100)], 1, { get: unread, enumerable: true }) as PtcJsonValue
    expect(indentedJson(list, 50)).toEqual({ text: `[\n  "${'x'.repeat(45)}`, complete: false })
  })

  it('with indent 0, writes what JSON.stringify(value) writes, and stops at the length asked', () => {
    fc.assert(
      fc.property(jsonValue, (value) => {
        expect(indentedJson(value as PtcJsonValue, Infinity, 0)).toEqual({ text: JSON.stringify(value), complete: true })
      }),
      { numRuns: 1000 },
    )
    const value = { a: [1, 'two', { three: [null, true] }], 'b "c"': {}, d: [] }
    const whole = JSON.stringify(value)
    for (let max = 0; max <= whole.length + 1; max++) {
      expect(indentedJson(value, max, 0)).toEqual({ text: whole.slice(0, max), complete: max >= whole.length })
    }
  })

  it('writes a value nested deeper than the stack, as far as asked', () => {
    // JSON.stringify overflows the stack at a few thousand levels.
    const deep = nested(200_000)
    expect(indentedJson(deep, 100, 0)).toEqual({ text: '['.repeat(100), complete: false })
    expect(indentedJson(deep, Infinity, 0)).toEqual({ text: `${'['.repeat(200_001)}${']'.repeat(200_001)}`, complete: true })
    expect(indentedJson(deep, 100)).toEqual({ text: JSON.stringify(nested(20), null, 2).slice(0, 100), complete: false })
  })

  it('cuts a value indented longer than any string can be', () => {
    // 30 copies of 3 000 nested arrays: 180 KB of JSON, indented past the longest string V8 makes.
    const copies = (count: number) => Array.from({ length: count }, () => nested(3000))
    expect(indentedJson(copies(30), 10_000)).toEqual({ text: JSON.stringify(copies(2), null, 2).slice(0, 10_000), complete: false })
  })
})
