import vm from 'node:vm'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { snapshotJson } from '../../src/json/index.js'
import { chainDepth, jsonValue, nestedArrays, nestedRecords } from './arbitraries.js'

function reasonOf(value: unknown): string {
  const result = snapshotJson(value)
  if (result.ok) throw new Error(`expected a rejection, got ${JSON.stringify(result.value)}`)
  return result.reason
}

describe('snapshotJson accepts', () => {
  it('returns an equal, detached copy of every lossless value', () => {
    fc.assert(
      fc.property(jsonValue, (value) => {
        const result = snapshotJson(value)
        expect(result.ok).toBe(true)
        if (!result.ok) return
        expect(JSON.stringify(result.value)).toBe(JSON.stringify(value))
        if (typeof value === 'object' && value !== null) expect(result.value).not.toBe(value)
      }),
    )
  })

  it('copies shared references instead of preserving identity', () => {
    const shared = { x: 1 }
    const result = snapshotJson({ a: shared, b: [shared, shared] })
    expect(result).toEqual({ ok: true, value: { a: { x: 1 }, b: [{ x: 1 }, { x: 1 }] } })
    if (!result.ok) return
    const copy = result.value as { a: object; b: object[] }
    expect(copy.a).not.toBe(shared)
    expect(copy.b[0]).not.toBe(copy.b[1])
  })

  it('copies null-prototype objects into plain objects', () => {
    const source = Object.assign(Object.create(null) as object, { a: 1 })
    const result = snapshotJson(source)
    expect(result).toEqual({ ok: true, value: { a: 1 } })
    if (result.ok) expect(Object.getPrototypeOf(result.value)).toBe(Object.prototype)
  })

  it('preserves a literal __proto__ key as an own data property', () => {
    const result = snapshotJson(JSON.parse('{"__proto__": {"polluted": true}, "b": 1}'))
    expect(result.ok).toBe(true)
    if (!result.ok) return
    const copy = result.value as Record<string, unknown>
    expect(Object.getPrototypeOf(copy)).toBe(Object.prototype)
    expect(Object.keys(copy)).toEqual(['__proto__', 'b'])
    expect(Object.getOwnPropertyDescriptor(copy, '__proto__')?.value).toEqual({ polluted: true })
  })

  it('counts the keys and values of every object, each copy of a shared one again, when checked against maxKeys', () => {
    const shared = { x: 1, y: 2 }
    const maxKeys = { perObject: 10, total: 100, values: 100 }
    expect(snapshotJson({ a: shared, b: [shared, { z: [] }] }, { maxKeys })).toEqual({ ok: true, value: { a: shared, b: [shared, { z: [] }] }, keys: 7, values: 10 })
    expect(snapshotJson([[], [[]]], { maxKeys })).toEqual({ ok: true, value: [[], [[]]], keys: 0, values: 4 })
    expect(snapshotJson(['ab', 1, null, true, { k: 'v' }], { maxKeys })).toEqual({ ok: true, value: ['ab', 1, null, true, { k: 'v' }], keys: 1, values: 7 })
    expect(snapshotJson({ a: 1 })).toEqual({ ok: true, value: { a: 1 } })
  })

  it('refuses a value past maxKeys.values at the first value past it, scalars counted like lists and objects', () => {
    const maxKeys = { perObject: 10, total: 100, values: 3 }
    expect(snapshotJson(['ab', 'ab'], { maxKeys })).toEqual({ ok: true, value: ['ab', 'ab'], keys: 0, values: 3 })
    expect(snapshotJson(['ab', 'ab', 'ab'], { maxKeys })).toEqual({ ok: false, reason: 'more than 3 values in all at $[2]', tooManyKeys: true })
    expect(snapshotJson({ a: [0, null] }, { maxKeys })).toEqual({ ok: false, reason: 'more than 3 values in all at $.a[1]', tooManyKeys: true })
  })

  it('accepts arrays and objects from another vm realm and copies them into this realm', () => {
    const foreign: unknown = vm.runInNewContext('({ list: [1, { b: null }], empty: Object.create(null) })')
    const result = snapshotJson(foreign)
    expect(result).toEqual({ ok: true, value: { list: [1, { b: null }], empty: {} } })
    if (result.ok) expect(Object.getPrototypeOf((result.value as { list: unknown }).list)).toBe(Array.prototype)
  })

  it('reads every property exactly once, running each getter once', () => {
    let reads = 0
    const source = {
      get a() {
        reads++
        return [reads]
      },
    }
    const list = [0]
    Object.defineProperty(list, 0, { get: () => ++reads, enumerable: true })
    expect(snapshotJson({ source, list })).toEqual({ ok: true, value: { source: { a: [1] }, list: [2] } })
    expect(reads).toBe(2)
  })

  it.each([
    ['arrays', nestedArrays],
    ['objects', nestedRecords],
  ])('snapshots 10 000- and 100 000-deep %s without growing the call stack', (_, build) => {
    for (const depth of [10_000, 100_000]) {
      const result = snapshotJson(build(depth))
      expect(result.ok).toBe(true)
      if (result.ok) expect(chainDepth(result.value)).toBe(depth)
    }
  })
})

describe('snapshotJson rejects', () => {
  it.each<[string, () => unknown, string]>([
    ['undefined at the top level', () => undefined, 'undefined at $'],
    ['-0', () => ({ n: -0 }), '-0 at $.n'],
    ['NaN with a precise path', () => ({ items: [0, 1, { price: NaN }] }), 'NaN at $.items[2].price'],
    ['Infinity', () => [Infinity], 'Infinity at $[0]'],
    ['-Infinity', () => [-Infinity], '-Infinity at $[0]'],
    ['a bigint', () => 1n, 'bigint at $'],
    ['a symbol', () => ({ s: Symbol('s') }), 'symbol at $.s'],
    ['a function', () => [() => 1], 'function at $[0]'],
    ['a hole', () => [, 1], 'hole at $[0]'],
    ['undefined in an array', () => [1, 2, 3, undefined], 'undefined at $[3]'],
    ['undefined in an object', () => ({ a: undefined }), 'undefined at $.a'],
    ['a Date', () => ({ when: new Date() }), 'Date instance at $.when'],
    ['a Map', () => new Map(), 'Map instance at $'],
    ['a Set', () => new Set(), 'Set instance at $'],
    ['a RegExp', () => /x/, 'RegExp instance at $'],
    ['a typed array', () => new Uint8Array(1), 'Uint8Array instance at $'],
    ['an Error', () => new Error('e'), 'Error instance at $'],
    ['a boxed primitive', () => Object(1), 'Number instance at $'],
    ['a boxed primitive with a plain prototype', () => Object.setPrototypeOf(Object('s'), Object.prototype), 'boxed primitive at $'],
    ['an object with a custom prototype', () => Object.create({}), 'object with a custom prototype at $'],
    ['a class instance', () => new (class Point {})(), 'Point instance at $'],
    ['an Array subclass', () => new (class List extends Array {})(), 'List instance at $'],
    ['a foreign-realm Date', () => vm.runInNewContext('new Date()'), 'Date instance at $'],
    ['an array with an extra property', () => Object.assign([1], { x: 1 }), 'array with extra property "x" at $'],
    ['an array with a symbol property', () => Object.assign([1], { [Symbol('s')]: 1 }), 'symbol key at $'],
    ['a non-enumerable key', () => Object.defineProperty({}, 'x', { value: 1 }), 'non-enumerable key "x" at $'],
    ['a symbol key', () => ({ a: { [Symbol('s')]: 1 } }), 'symbol key at $.a'],
    ['a proxy', () => new Proxy({}, {}), 'proxy at $'],
    ['a revoked proxy', () => Proxy.revocable([], {}).proxy, 'proxy at $'],
    ['an odd key with bracket notation', () => ({ 'a b': { '0': NaN } }), 'NaN at $["a b"]["0"]'],
  ])('%s', (_, make, reason) => {
    expect(reasonOf(make())).toBe(reason)
  })

  it('a cycle, but not a shared reference', () => {
    const root: { a: { b?: unknown } } = { a: {} }
    root.a.b = root.a
    expect(reasonOf(root)).toBe('cycle at $.a.b')
    const list: unknown[] = []
    list.push([list])
    expect(reasonOf(list)).toBe('cycle at $[0][0]')
  })

  it('a throwing getter, naming it and its message', () => {
    const source = {
      get x(): never {
        throw new Error('boom')
      },
    }
    expect(reasonOf(source)).toBe('getter threw at $.x: boom')
    // The failed walk leaves no state behind: the same object is still reported the same way.
    expect(reasonOf({ again: source })).toBe('getter threw at $.again.x: boom')
  })

  it('an array whose getter shrinks or grows its length mid-walk', () => {
    const shrinking = [1, 2, 3]
    Object.defineProperty(shrinking, 0, { get: () => ((shrinking.length = 1), 1), enumerable: true })
    expect(reasonOf(shrinking)).toBe('array length changed at $')
    const growing = [1, 2]
    Object.defineProperty(growing, 0, { get: () => (growing.push(3), 1), enumerable: true })
    expect(reasonOf({ growing })).toBe('array length changed at $.growing')
  })

  it('spoofed intrinsic prototypes from a fake realm', () => {
    const FakeObject = function Object() {}
    Object.setPrototypeOf(FakeObject.prototype, null)
    Object.defineProperty(FakeObject, 'prototype', { writable: false })
    const fakeArrayProto: unknown[] = []
    Object.setPrototypeOf(fakeArrayProto, Object.prototype)
    Object.defineProperty(fakeArrayProto, 'constructor', { value: Array })
    expect(reasonOf(Object.create(FakeObject.prototype as object))).toBe('Object instance at $')
    expect(reasonOf(Object.setPrototypeOf([1], fakeArrayProto))).toBe('Array instance at $')
  })

  it('keeps a 100 000-deep failure path short', () => {
    const reason = reasonOf(nestedArrays(100_000, [NaN]))
    expect(reason.startsWith('NaN at $[0][0]')).toBe(true)
    expect(reason.length).toBeLessThan(80)
  })
})
