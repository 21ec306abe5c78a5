import { describe, expect, it } from 'vitest'
import { decodeWire, encodeWire, fitJsonString, jsonByteLength, jsonStringByteLength, snapshotJson } from '../../src/json/index.js'

// The test's own plumbing must survive the patches too, so it uses captured functions.
const { defineProperty, getOwnPropertyDescriptor, hasOwn, setPrototypeOf } = Object

type Patch = [target: object, key: PropertyKey, descriptor: PropertyDescriptor]

/** Runs `probe` with `patches` in force, restoring every patched slot before returning. */
function underPatch<T>(patches: Patch[], probe: () => T): T {
  const saved: [object, PropertyKey, PropertyDescriptor | undefined][] = []
  for (const [target, key] of patches) {
    // Null-prototype descriptors: planted `get`/`value` accessors must not leak into them.
    const descriptor = getOwnPropertyDescriptor(target, key)
    saved.push([target, key, descriptor && (setPrototypeOf(descriptor, null) as PropertyDescriptor)])
  }
  try {
    for (const [target, key, descriptor] of patches) defineProperty(target, key, descriptor)
    return probe()
  } finally {
    for (const [target, key, descriptor] of saved) {
      if (descriptor === undefined) delete (target as Record<PropertyKey, unknown>)[key]
      else defineProperty(target, key, descriptor)
    }
  }
}

const replaced = (target: object, key: PropertyKey, value: unknown): Patch => [
  target,
  key,
  { __proto__: null, value, writable: true, configurable: true } as PropertyDescriptor,
]

/** Inputs for every helper, built before any patch. */
function makeProbes() {
  const shared = { k: 'v' }
  const cyclic: Record<string, unknown> = {}
  cyclic.self = cyclic
  const values: unknown[] = [
    { a: [1, 'two', null, true], shared, again: shared },
    Object.assign(Object.create(null) as object, { x: 1 }),
    Object.create({}),
    new Date(0),
    Object.assign([1], { extra: true }),
    Object.defineProperty({}, 'hidden', { value: 1 }),
    { [Symbol.iterator]: 1 },
    [, 1],
    cyclic,
    new Proxy({}, {}),
  ]
  const text = 'a"b\\c\n\u0001é中😀\ud800' + 'x'.repeat(64)
  const record = { list: [1, { deep: ['x'] }], n: 2.5 }
  const badTokens = [{ kind: 'array', length: 1, x: 1 }, 1]
  const results: unknown[] = new Array(values.length + 7).fill(null)
  return { values, text, record, badTokens, results }
}

/** Calls only the helpers under test (anything else may be broken while this runs). */
function probeHelpers({ values, text, record, badTokens, results }: ReturnType<typeof makeProbes>): unknown[] {
  let at = 0
  for (; at < values.length; at++) results[at] = snapshotJson(values[at])
  const wire = encodeWire(record)
  results[at++] = wire
  results[at++] = decodeWire(wire)
  results[at++] = decodeWire(badTokens)
  results[at++] = jsonStringByteLength(text)
  results[at++] = jsonByteLength({ list: [1, text, null, false] })
  results[at++] = fitJsonString(text, 20)
  results[at++] = fitJsonString(text, 1_000)
  return results
}

/** The answers as plain JSON text, so prototypes of copies are compared too. */
function verdicts(patches: Patch[]): string {
  const probes = makeProbes()
  const results = underPatch(patches, () => probeHelpers(probes))
  return JSON.stringify(results.map((result) => [result, Object.getPrototypeOf(result) === Object.prototype]))
}

describe('the JSON helpers after a program mutates globals', () => {
  const expected = verdicts([])
  const fakeNative = () => 'function Object() { [native code] }'

  it.each<[string, Patch[]]>([
    ['Array.isArray', [replaced(Array, 'isArray', () => false)]],
    ['JSON.stringify', [replaced(JSON, 'stringify', () => '"forged"')]],
    ['Function.prototype.toString', [replaced(Function.prototype, 'toString', fakeNative)]],
    ['Function.prototype.call and bind', [replaced(Function.prototype, 'call', () => 0), replaced(Function.prototype, 'bind', () => 0)]],
    ['Reflect.ownKeys and Object.keys', [replaced(Reflect, 'ownKeys', () => []), replaced(Object, 'keys', () => [])]],
    ['Reflect and Object statics', [replaced(Reflect, 'getPrototypeOf', () => null), replaced(Object, 'hasOwn', () => true)]],
    ['Set and WeakSet methods', [replaced(Set.prototype, 'has', () => false), replaced(Set.prototype, 'add', () => 0), replaced(WeakSet.prototype, 'has', () => true)]],
    ['String and RegExp methods', [replaced(String.prototype, 'charCodeAt', () => 65), replaced(RegExp.prototype, 'exec', () => null), replaced(String.prototype, 'slice', () => '')]],
    ['Object.prototype.propertyIsEnumerable', [replaced(Object.prototype, 'propertyIsEnumerable', () => true)]],
    ['the globals Object, Array, Reflect, JSON, Set and TypeError', ['Object', 'Array', 'Reflect', 'JSON', 'Set', 'TypeError'].map((name) => replaced(globalThis, name, undefined))],
  ])('give the same answers after %s is replaced', (_, patches) => {
    expect(verdicts(patches)).toBe(expected)
  })

  it('give the same answers, unobserved, with accessors planted on Object.prototype and Array.prototype', () => {
    // A log string, not an array: pushing to an array would itself hit the planted setters.
    let observed = ''
    const trap = (key: string) => ({
      __proto__: null,
      get() {
        observed += `get ${key}; `
        return 'polluted'
      },
      set() {
        observed += `set ${key}; `
      },
      configurable: true,
    }) as PropertyDescriptor
    const keys = ['0', '1', 'get', 'set', 'value', 'writable', 'kind', 'length', 'keys', 'fields', 'copy', 'index', 'source', 'parent', 'slot', 'self', 'leaf']
    const patches: Patch[] = []
    for (const target of [Object.prototype, Array.prototype]) {
      for (const key of keys) if (!hasOwn(target, key)) patches.push([target, key, trap(key)])
    }
    expect(verdicts(patches)).toBe(expected)
    expect(observed).toBe('')
  })

  it('still reject a spoofed Object prototype while Function.prototype.toString lies', () => {
    const FakeObject = function Object() {}
    Object.setPrototypeOf(FakeObject.prototype, null)
    Object.defineProperty(FakeObject, 'prototype', { writable: false })
    const spoof = Object.create(FakeObject.prototype as object) as object
    const result = underPatch([replaced(Function.prototype, 'toString', fakeNative)], () => snapshotJson(spoof))
    expect(result).toEqual({ ok: false, reason: 'Object instance at $' })
  })
})
