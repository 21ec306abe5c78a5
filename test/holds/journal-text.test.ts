import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { jsonText, preview } from '../../src/host/durable/journal-text.js'
import { jsonValue, nestedArrays, nestedRecords } from '../json/arbitraries.js'

/** Deeper than JSON.stringify's recursion reaches on the host's stack before Node 26 (whose JSON.stringify no longer recurses). */
const DEEP = 20_000

describe('the journal writes JSON without recursion', () => {
  it('writes what JSON.stringify writes, for any value', () => {
    fc.assert(fc.property(jsonValue, (value) => jsonText(value) === JSON.stringify(value)))
  })

  it('writes any value inside objects and arrays nested past the stack exactly as JSON.stringify writes it alone', () => {
    fc.assert(
      fc.property(jsonValue, (value) => {
        const inObjects = jsonText(nestedRecords(DEEP, value))
        const inArrays = jsonText(nestedArrays(DEEP, value))
        const inner = JSON.stringify(value)
        return inObjects === `${'{"a":'.repeat(DEEP)}${inner}${'}'.repeat(DEEP)}` && inArrays === `${'['.repeat(DEEP)}${inner}${']'.repeat(DEEP)}`
      }),
      { numRuns: 20 },
    )
  })

  it('leaves out properties whose value is undefined, as JSON.stringify does, at any depth', () => {
    const record = { id: 'x', left: undefined, calls: [nestedRecords(DEEP, { kept: 1, dropped: undefined } as never)] }
    expect(jsonText(record as never)).toBe(`{"id":"x","calls":[${'{"a":'.repeat(DEEP)}{"kept":1}${'}'.repeat(DEEP)}]}`)
  })

  it('previews a long text cut short and marked, never inside a surrogate pair', () => {
    expect(preview('abc', 5)).toBe('abc')
    expect(preview('abcdefgh', 5)).toBe('abcde…')
    expect(preview('abcd😀', 5)).toBe('abcd…')
  })
})
