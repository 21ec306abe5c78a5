/**
 * The host's one walk over a tool's result (src/host/run/json-conversion.ts `encodeResult`):
 * the size the meter counts and the tokens the wire encoding writes, for every value.
 */
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { encodeWire, jsonByteLength, jsonStringByteLength, snapshotJson } from '../../src/json/index.js'
import { encodeResult } from '../../src/host/run/json-conversion.js'
import { PtcImage } from '../../src/seam/image.js'
import type { PtcJsonValue } from '../../src/seam/types.js'
import { jsonText, jsonValue, nestedArrays, nestedRecords } from './arbitraries.js'

const noLeaf = () => {
  throw new Error('no leaf expected')
}

describe("the host's encoding of a tool's result", () => {
  it('counts what the meter counts and writes the tokens encodeWire writes, for fuzzed values', () => {
    fc.assert(
      fc.property(jsonValue, (value) => {
        const snapshot = snapshotJson(value)
        if (!snapshot.ok) return
        expect(encodeResult(snapshot.value, noLeaf, Number.POSITIVE_INFINITY)).toEqual({ bytes: jsonByteLength(snapshot.value), tokens: encodeWire(snapshot.value) })
      }),
      { numRuns: 1000 },
    )
  })

  it('counts fuzzed strings as the meter does, whether or not they have anything to escape', () => {
    fc.assert(fc.property(jsonText, (text) => encodeResult(text, noLeaf, Number.POSITIVE_INFINITY).bytes === jsonStringByteLength(text)), { numRuns: 2000 })
  })

  it('counts escapes, lone surrogates and astral characters as JSON.stringify writes them', () => {
    for (const text of ['\u0000\u001f"\\\n\t', '\ud800', 'a\udc00b', '😀', 'é€', '\u2028\u2029\u007f']) {
      expect(encodeResult(text, noLeaf, Number.POSITIVE_INFINITY).bytes).toBe(Buffer.byteLength(JSON.stringify(text)))
    }
  })

  it('walks values of any depth', () => {
    for (const value of [nestedArrays(100_000), nestedRecords(100_000)]) {
      expect(encodeResult(value, noLeaf, Number.POSITIVE_INFINITY)).toEqual({ bytes: jsonByteLength(value), tokens: encodeWire(value) })
    }
  })

  it('writes an image as its leaf fields and counts it as its own fields, as before', () => {
    const image = new PtcImage('/tmp/a.png', { attachmentId: 'img-1', mimeType: 'image/png' } as never)
    const value = { shown: [image, 1] } as unknown as PtcJsonValue
    const fields = { path: image.path, attachmentId: 'img-1' }
    const encoded = encodeResult(value, () => fields, Number.POSITIVE_INFINITY)
    expect(encoded).toEqual({ bytes: jsonByteLength(value), tokens: encodeWire(value, () => fields) })
  })

  it('past its budget gives the exact size and no tokens, for the message that names it', () => {
    const value = { text: 'x'.repeat(100), list: [1, 2, 3] }
    const bytes = jsonByteLength(value)
    expect(encodeResult(value, noLeaf, bytes)).toEqual({ bytes, tokens: encodeWire(value) })
    expect(encodeResult(value, noLeaf, bytes - 1)).toEqual({ bytes })
  })

  it('refuses what is not lossless JSON, as encodeWire does', () => {
    expect(() => encodeResult(Number.NaN, noLeaf, 100)).toThrow(TypeError)
    expect(() => encodeResult(-0, noLeaf, 100)).toThrow(TypeError)
    expect(() => encodeResult([undefined] as never, noLeaf, 100)).toThrow(TypeError)
  })
})
