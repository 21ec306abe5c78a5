import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { pathPastDepth } from '../../src/json/depth.js'
import { jsonValue, nestedArrays, nestedRecords } from './arbitraries.js'

/** How many containers deep a value nests (a small fuzzed value: recursion is fine here). */
const depthOf = (value: unknown): number =>
  typeof value !== 'object' || value === null ? 0 : 1 + Math.max(0, ...Object.values(value).map(depthOf))

describe('pathPastDepth', () => {
  it('finds nothing in a value within the bound', () => {
    expect(pathPastDepth(7, 0)).toBeNull()
    expect(pathPastDepth(nestedArrays(9_999, [1]), 10_000)).toBeNull()
    expect(pathPastDepth(nestedRecords(9_999), 10_000)).toBeNull()
  })

  it('names the first container past the bound in document order, long paths shortened', () => {
    expect(pathPastDepth({ wide: [1, [2]], deep: [[{}]], later: [[[]]] }, 3)).toBe('$.deep[0][0]')
    expect(pathPastDepth(nestedArrays(100_000), 10_000)).toBe(`$${'[0]'.repeat(8)}…${'[0]'.repeat(8)}`)
    expect(pathPastDepth([], 0)).toBe('$')
  })

  it('agrees with the depth of fuzzed values', () => {
    fc.assert(
      fc.property(jsonValue, fc.integer({ min: 0, max: 6 }), (value, maxDepth) => {
        expect(pathPastDepth(value, maxDepth) === null).toBe(depthOf(value) <= maxDepth)
      }),
      { numRuns: 2000 },
    )
  })
})
