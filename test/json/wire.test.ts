import vm from 'node:vm'
import { MessageChannel } from 'node:worker_threads'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { decodeWire, encodeWire, snapshotJson, type LeafFields } from '../../src/json/index.js'
import type { PtcJsonValue } from '../../src/seam/types.js'
import { chainDepth, jsonValue, nestedArrays, nestedRecords } from './arbitraries.js'

function reasonOf(tokens: unknown, decodeLeaf?: (fields: LeafFields) => object | undefined): string {
  const result = decodeWire(tokens, decodeLeaf)
  if (result.ok) throw new Error(`expected a rejection, got ${JSON.stringify(result.value)}`)
  return result.reason
}

const arrayOf = (length: unknown) => ({ kind: 'array', length })
const objectOf = (keys: unknown) => ({ kind: 'object', keys })

describe('wire encoding', () => {
  it('round-trips fuzzed values through structured clone, keeping key order', () => {
    fc.assert(
      fc.property(jsonValue, (value) => {
        const decoded = decodeWire(structuredClone(encodeWire(value)))
        expect(decoded.ok).toBe(true)
        if (decoded.ok) expect(JSON.stringify(decoded.value)).toBe(JSON.stringify(value))
      }),
      { numRuns: 500 },
    )
  })

  it('encodes a top-level scalar as a single token', () => {
    expect(encodeWire('text')).toEqual(['text'])
    expect(encodeWire(null)).toEqual([null])
    expect(encodeWire([1, { a: true }])).toEqual([{ kind: 'array', length: 2 }, 1, { kind: 'object', keys: ['a'] }, true])
  })

  it('decodes a "__proto__" key as an own data property', () => {
    const result = decodeWire([objectOf(['__proto__', 'b']), { kind: 'array', length: 0 }, 2])
    expect(result.ok).toBe(true)
    if (!result.ok) return
    const value = result.value as Record<string, unknown>
    expect(Object.getPrototypeOf(value)).toBe(Object.prototype)
    expect(Object.getOwnPropertyDescriptor(value, '__proto__')?.value).toEqual([])
    expect(Object.keys(value)).toEqual(['__proto__', 'b'])
  })

  it.each([
    ['arrays', nestedArrays],
    ['objects', nestedRecords],
  ])('round-trips 10 000- and 100 000-deep %s through a real MessagePort', async (_, build) => {
    const { port1, port2 } = new MessageChannel()
    try {
      for (const depth of [10_000, 100_000]) {
        const snapshot = snapshotJson(build(depth))
        expect(snapshot.ok).toBe(true)
        if (!snapshot.ok) return
        const tokens = encodeWire(snapshot.value)
        expect(tokens).toHaveLength(depth + 1)
        const received = new Promise<unknown>((resolve) => port2.once('message', resolve))
        port1.postMessage(tokens)
        const decoded = decodeWire(await received)
        expect(decoded.ok).toBe(true)
        if (decoded.ok) expect(chainDepth(decoded.value)).toBe(depth)
      }
    } finally {
      port1.close()
    }
  })

  it('carries leaves through encodeLeaf and decodeLeaf', () => {
    class Picture {
      constructor(readonly path: string, readonly width: number) {}
    }
    const picture = new Picture('/tmp/a.png', 640)
    const snapshot = snapshotJson({ shot: picture, n: 1 }, { leaf: (value) => (value instanceof Picture ? value : undefined) })
    expect(snapshot.ok).toBe(true)
    if (!snapshot.ok) return
    expect((snapshot.value as { shot: unknown }).shot).toBe(picture)
    const tokens = encodeWire(snapshot.value, (leaf) => ({ path: (leaf as Picture).path, width: (leaf as Picture).width }))
    const decoded = decodeWire(structuredClone(tokens), (fields) =>
      typeof fields.path === 'string' && typeof fields.width === 'number' ? new Picture(fields.path, fields.width) : undefined,
    )
    expect(decoded).toEqual({ ok: true, value: { shot: new Picture('/tmp/a.png', 640), n: 1 } })
    expect(reasonOf(tokens)).toBe('leaf marker without a leaf decoder at token 1')
    expect(reasonOf(tokens, () => undefined)).toBe('rejected leaf at token 1')
  })

  it('refuses to encode what a forged static type let through', () => {
    expect(() => encodeWire([undefined] as never)).toThrow(TypeError)
    expect(() => encodeWire({ value: undefined } as never)).toThrow(TypeError)
    expect(() => encodeWire(-0)).toThrow(TypeError)
    expect(() => encodeWire({ when: new Date() } as never)).toThrow('encodeWire met a leaf object but has no encodeLeaf')
  })
})

describe('wire decoding rejects', () => {
  const accessor = Object.defineProperty([0], 0, {
    get() {
      throw new Error('boom')
    },
  })
  const leafOf = (fields: unknown) => [{ kind: 'leaf', fields }]
  const acceptLeaf = () => ({})

  it.each<[string, unknown, string]>([
    ['a non-array', { 0: 1, length: 1 }, 'wire tokens not an array'],
    ['a proxy of an array', new Proxy([1], {}), 'wire tokens not an array'],
    ['an array from another realm', vm.runInNewContext('[1]'), 'wire tokens with a foreign prototype'],
    ['an empty array', [], 'wire tokens are empty'],
    ['a sparse array', [arrayOf(1), ,], 'hole at token 1'],
    ['a decorated array', Object.assign([1], { extra: 1 }), 'wire tokens with extra property "extra"'],
    ['a symbol-decorated array', Object.assign([1], { [Symbol('s')]: 1 }), 'wire tokens with a symbol key'],
    ['a throwing accessor', accessor, 'reading threw (boom) at token 0'],
    ['-0', [-0], '-0 at token 0'],
    ['NaN', [arrayOf(1), NaN], 'NaN at token 1'],
    ['Infinity', [Infinity], 'Infinity at token 0'],
    ['undefined', [undefined], 'undefined at token 0'],
    ['a bigint', [1n], 'bigint at token 0'],
    ['a nested array token', [[1]], 'token with a foreign prototype at token 0'],
    ['a marker with a foreign prototype', [Object.setPrototypeOf(arrayOf(0), {})], 'token with a foreign prototype at token 0'],
    ['a marker from another realm', [vm.runInNewContext("({ kind: 'array', length: 0 })")], 'token with a foreign prototype at token 0'],
    ['a proxy marker', [new Proxy(arrayOf(0), {})], 'proxy token at token 0'],
    ['a marker with an extra field', [{ kind: 'array', length: 0, x: 1 }], 'marker without exactly two fields at token 0'],
    ['a marker with a missing field', [{ kind: 'array' }], 'marker without exactly two fields at token 0'],
    ['a marker with the wrong field', [{ kind: 'array', keys: [] }], 'array marker without a valid length at token 0'],
    ['a marker with an unknown kind', [{ kind: 'map', length: 0 }], 'marker with an unknown kind at token 0'],
    ['a fractional length', [arrayOf(1.5), 1, 2], 'array marker without a valid length at token 0'],
    ['a negative length', [arrayOf(-1)], 'array marker without a valid length at token 0'],
    ['a -0 length', [arrayOf(-0)], 'array marker without a valid length at token 0'],
    ['a string length', [arrayOf('1'), 1], 'array marker without a valid length at token 0'],
    ['an unsafe length', [arrayOf(2 ** 53)], 'array marker without a valid length at token 0'],
    ['a length beyond the remaining tokens', [arrayOf(2), 1], 'array length exceeds the remaining tokens at token 0'],
    ['keys beyond the remaining tokens', [objectOf(['a', 'b']), 1], 'object keys exceed the remaining tokens at token 0'],
    ['duplicate keys', [objectOf(['a', 'a']), 1, 2], 'object marker with duplicate key "a" at token 0'],
    ['duplicate __proto__ keys', [objectOf(['__proto__', '__proto__']), 1, 2], 'object marker with duplicate key "__proto__" at token 0'],
    ['a non-string key', [objectOf([1]), 1], 'object marker with a non-string key at token 0'],
    ['keys that are not an array', [objectOf('a'), 1], 'object marker keys not an array at token 0'],
    ['sparse keys', [objectOf([, 'a']), 1, 2], 'object marker keys with a hole at token 0'],
    ['decorated keys', [objectOf(Object.assign(['a'], { x: 1 })), 1], 'object marker keys with extra property "x" at token 0'],
    ['trailing tokens', [1, 2], 'trailing token at token 1'],
    ['trailing tokens after a container', [arrayOf(0), 1], 'trailing token at token 1'],
    ['an incomplete container', [arrayOf(2), arrayOf(1), 1], 'incomplete container at end of tokens'],
    ['nested leaf fields', leafOf({ a: {} }), 'leaf field "a" not a string or finite number at token 0'],
    ['non-finite leaf fields', leafOf({ a: NaN }), 'leaf field "a" not a string or finite number at token 0'],
    ['leaf fields with a symbol key', leafOf({ [Symbol('s')]: 1 }), 'leaf fields with a symbol key at token 0'],
    ['leaf fields that are an array', leafOf(['a']), 'leaf fields with a foreign prototype at token 0'],
    ['leaf fields that are not an object', leafOf('a'), 'leaf fields not an object at token 0'],
  ])('%s', (_, tokens, reason) => {
    expect(reasonOf(tokens, acceptLeaf)).toBe(reason)
  })

  it('accepts the same shapes once they are well formed', () => {
    const good: [unknown[], PtcJsonValue][] = [
      [[arrayOf(2), 1, 2], [1, 2]],
      [[objectOf(['a']), arrayOf(0)], { a: [] }],
      [[arrayOf(1), objectOf([])], [{}]],
    ]
    for (const [tokens, value] of good) expect(decodeWire(tokens)).toEqual({ ok: true, value })
  })
})
