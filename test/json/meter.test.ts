import fc from 'fast-check'
import { describe, expect, it, vi } from 'vitest'
import { fitJsonString, jsonByteLength, jsonStringByteLength } from '../../src/json/index.js'
import { jsonText, jsonValue, nestedArrays, nestedRecords } from './arbitraries.js'

const serializedBytes = (value: unknown): number => Buffer.byteLength(JSON.stringify(value))

describe('jsonStringByteLength', () => {
  it('equals the UTF-8 length of JSON.stringify for fuzzed strings', () => {
    fc.assert(fc.property(jsonText, (text) => jsonStringByteLength(text) === serializedBytes(text)), { numRuns: 2000 })
  })

  it('counts every escape class exactly', () => {
    const samples = ['', 'a', '"', '\\', '\n', '\b\t\f\r', '\x00', '\x1f', '\x7f', 'é', '中', '\u2028', '😀', '\ud83d', '\ude00', '\ude00\ud83d']
    for (const text of samples) expect(jsonStringByteLength(text)).toBe(serializedBytes(text))
    // Long strings take the fast path until their first special character.
    for (const text of samples) expect(jsonStringByteLength('x'.repeat(100) + text)).toBe(serializedBytes('x'.repeat(100) + text))
  })

  it('meters a long string without serializing it', () => {
    const text = 'a'.repeat(10_000_000) + '\n'
    const stringify = vi.spyOn(JSON, 'stringify').mockImplementation(() => {
      throw new Error('JSON.stringify must not be used')
    })
    try {
      expect(jsonStringByteLength(text)).toBe(10_000_004)
      expect(fitJsonString(text, 5_000_002)).toHaveLength(5_000_000)
    } finally {
      stringify.mockRestore()
    }
  })
})

describe('jsonByteLength', () => {
  it('equals the UTF-8 length of JSON.stringify for fuzzed values', () => {
    fc.assert(fc.property(jsonValue, (value) => jsonByteLength(value) === serializedBytes(value)), { numRuns: 1000 })
  })

  it('meters 10 000- and 100 000-deep arrays and objects iteratively', () => {
    for (const depth of [10_000, 100_000]) {
      expect(jsonByteLength(nestedArrays(depth))).toBe(2 * depth + 2)
      // Each level adds `{"a":` and `}`.
      expect(jsonByteLength(nestedRecords(depth))).toBe(6 * depth + 2)
    }
    expect(jsonByteLength(nestedArrays(3))).toBe(serializedBytes(nestedArrays(3)))
    expect(jsonByteLength(nestedRecords(3))).toBe(serializedBytes(nestedRecords(3)))
  })

  it('refuses values a forged static type let through', () => {
    expect(() => jsonByteLength([NaN])).toThrow(TypeError)
    expect(() => jsonByteLength({ a: undefined } as never)).toThrow(TypeError)
  })
})

describe('fitJsonString', () => {
  it('returns the whole string when it fits exactly and cuts one character when one byte short', () => {
    expect(fitJsonString('abc', 5)).toBe('abc')
    expect(fitJsonString('abc', 4)).toBe('ab')
    expect(fitJsonString('abc', 1000)).toBe('abc')
  })

  it('returns an empty string when even the quotes do not fit', () => {
    expect(fitJsonString('abc', 2)).toBe('')
    expect(fitJsonString('abc', 1)).toBe('')
    expect(fitJsonString('abc', -5)).toBe('')
    expect(fitJsonString('abc', Number.NaN)).toBe('')
  })

  it('never splits a surrogate pair', () => {
    // 'a' 1 byte, the pair 4 bytes, quotes 2.
    expect(fitJsonString('a😀', 6)).toBe('a')
    expect(fitJsonString('a😀', 7)).toBe('a😀')
    expect(fitJsonString('😀😀', 9)).toBe('😀')
  })

  it('charges escapes and lone surrogates their escaped width', () => {
    expect(fitJsonString('a\nb', 5)).toBe('a\n')
    expect(fitJsonString('a\nb', 4)).toBe('a')
    expect(fitJsonString('\x01z', 7)).toBe('')
    expect(fitJsonString('\x01z', 8)).toBe('\x01')
    expect(fitJsonString('\ud800z', 8)).toBe('\ud800')
    expect(fitJsonString('é中', 6)).toBe('é')
  })

  it('returns the longest prefix that fits, for fuzzed strings and budgets', () => {
    fc.assert(
      fc.property(jsonText, fc.integer({ min: 0, max: 200 }), (text, maxBytes) => {
        const fitted = fitJsonString(text, maxBytes)
        expect(text.startsWith(fitted)).toBe(true)
        if (maxBytes < 2) {
          expect(fitted).toBe('')
          return
        }
        expect(serializedBytes(fitted)).toBeLessThanOrEqual(maxBytes)
        if (fitted === text) return
        // No pair was split, and taking the next whole code point would overflow.
        const last = fitted.charCodeAt(fitted.length - 1)
        if (last >= 0xd800 && last <= 0xdbff) expect(text.charCodeAt(fitted.length) & 0xfc00).not.toBe(0xdc00)
        const grown = fitted + String.fromCodePoint(text.codePointAt(fitted.length) as number)
        expect(serializedBytes(grown)).toBeGreaterThan(maxBytes)
      }),
      { numRuns: 2000 },
    )
  })
})
