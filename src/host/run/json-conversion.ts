/**
 * What a tool as people write it resolves, converted as `JSON.stringify` would, into a fresh
 * copy that is lossless JSON by construction (so the lossless check does not walk it again): `toJSON` is called (a `Date` becomes its ISO string), boxed primitives are
 * unwrapped, `-0` becomes `0`, object properties whose value is `undefined` are dropped and
 * array elements that are `undefined` become `null`, and a top-level `undefined` stays
 * `undefined`. Where `JSON.stringify` would lose a value silently or throw, the conversion fails
 * instead, with the reason the lossless check gives: a function or symbol (dropped by
 * `JSON.stringify`), `NaN` and `±Infinity` (written as `null`), a BigInt without `toJSON`, a
 * cycle, a proxy. Used for namespaces with `convertResults` (every tool group).
 *
 * The value comes from host code, but it may be as large as whatever a tool fetched, so the
 * walk is iterative (any depth) and bounded by the call's byte budget while it runs: it stops
 * as soon as a lower bound of the JSON's size passes `maxBytes`, and after a bounded number of
 * property reads (dropped fields write nothing but still cost a read).
 *
 * What the conversion (or, without `convertResults`, the lossless snapshot) gives is then
 * measured and written as wire tokens in one walk (`encodeResult`).
 */
import { types } from 'node:util'
import { type PathNode, type Slot, describeThrown, renderPath } from '../../json/path.js'
import { jsonByteLength, jsonStringByteLength } from '../../json/meter.js'
import type { LeafFields, WireTokens } from '../../json/wire.js'
import type { PtcJsonValue } from '../../seam/types.js'

/** What {@link convertAsJson} gives: the converted value and the leaves it kept, in the order met, or why there is none. */
export type Conversion =
  | { ok: true; value: unknown; leaves: object[] }
  | { ok: false; reason: string }
  | { ok: false; overBudget: true }

export interface ConversionOptions {
  /** JSON bytes the call may resolve; the walk stops once the value is surely larger. */
  maxBytes: number
  /**
   * The class whose instances are kept as they are (host-issued images), checked later by the
   * lossless snapshot: a class, not a callback, so the walk never calls out per object.
   */
  leaf: abstract new (...args: never) => object
}

/** Property reads allowed per byte of budget: room for dropped fields beside the kept ones. */
const READS_PER_BYTE = 4

interface Frame extends PathNode {
  readonly copy: Record<Slot, unknown>
  /** Own enumerable keys of a record; null for a list. */
  readonly keys: string[] | null
  readonly source: object
  readonly length: number
  readonly parent: Frame | null
  index: number
}

const DROPPED = Symbol('dropped')

/**
 * Converts `value` as `JSON.stringify` would (see the file header), into fresh arrays and
 * null-prototype objects. Never throws: a throwing getter or `toJSON` is a reason naming it.
 */
export function convertAsJson(value: unknown, options: ConversionOptions): Conversion {
  const { maxBytes, leaf } = options
  const maxReads = maxBytes * READS_PER_BYTE + 1024
  const ancestors = new Set<object>()
  const leaves: object[] = []
  let bytes = 0
  let reads = 0
  let frame: Frame | null = null
  let slot: Slot | null = null
  let rootCopy: unknown
  const fail = (what: string): Conversion => ({ ok: false, reason: `${what} at ${renderPath(frame, slot)}` })
  try {
    for (;;) {
      // Convert `value`, the property `slot` of `frame` (the root when frame is null).
      const key = slot === null ? '' : String(slot)
      let converted: unknown = value
      // Refused before any of its traps runs (a toJSON lookup would be one).
      if (typeof converted === 'object' && converted !== null && types.isProxy(converted)) return fail('proxy')
      if ((typeof converted === 'object' && converted !== null && !(converted instanceof leaf)) || typeof converted === 'bigint') {
        const toJSON = (converted as { toJSON?: unknown }).toJSON
        if (typeof toJSON === 'function') {
          try {
            converted = toJSON.call(converted, key)
          } catch (thrown) {
            return { ok: false, reason: `toJSON threw at ${renderPath(frame, slot)}: ${describeThrown(thrown)}` }
          }
        }
      }
      if (typeof converted === 'object' && converted !== null) converted = unboxed(converted)
      let opened: Frame | null = null
      switch (typeof converted) {
        case 'undefined':
          if (frame === null) return { ok: true, value: undefined, leaves }
          converted = frame.keys === null ? null : DROPPED
          break
        case 'number':
          if (!Number.isFinite(converted)) return fail(converted !== converted ? 'NaN' : converted > 0 ? 'Infinity' : '-Infinity')
          if (converted === 0) converted = 0 // -0 is written as 0
          bytes += 1
          break
        case 'string':
          bytes += converted.length + 2
          break
        case 'boolean':
          bytes += 4
          break
        case 'object': {
          if (converted === null) {
            bytes += 4
            break
          }
          if (types.isProxy(converted)) return fail('proxy') // what a toJSON returned
          if (converted instanceof leaf) {
            leaves.push(converted)
            bytes += 2
            break
          }
          if (ancestors.has(converted)) return fail('cycle')
          const list = Array.isArray(converted)
          // A typed array's keys are one string per element, made before the walk meters any of
          // them (20 MB of bytes held the host 56 s and 1 GB): each costs at least `"0":0`.
          if (types.isTypedArray(converted) && bytes + 2 + 5 * converted.length > maxBytes) return { ok: false, overBudget: true }
          const keys = list ? null : Object.keys(converted)
          const length = list ? (converted as unknown[]).length : keys!.length
          // Brackets, and the commas of a list (a record's may fall with its dropped fields).
          bytes += list ? 1 + Math.max(1, length) : 2
          const copy = list ? [] : Object.create(null)
          opened = { copy, keys, source: converted, length, parent: frame, slot, index: 0 }
          ancestors.add(converted)
          converted = copy
          break
        }
        default:
          return fail(typeof converted)
      }
      if (bytes > maxBytes) return { ok: false, overBudget: true }
      if (frame === null) rootCopy = converted
      else if (converted !== DROPPED) {
        if (frame.keys !== null) bytes += (slot as string).length + 3
        frame.copy[slot as Slot] = converted
      }
      if (opened !== null) frame = opened

      // The next property to read, closing finished containers on the way up.
      for (;;) {
        if (frame === null) return { ok: true, value: rootCopy, leaves }
        if (frame.index < frame.length) break
        ancestors.delete(frame.source)
        frame = frame.parent
      }
      if (++reads > maxReads) return { ok: false, overBudget: true }
      const index = frame.index++
      slot = frame.keys === null ? index : (frame.keys[index] as string)
      try {
        value = (frame.source as Record<Slot, unknown>)[slot]
      } catch (thrown) {
        return { ok: false, reason: `getter threw at ${renderPath(frame, slot)}: ${describeThrown(thrown)}` }
      }
    }
  } catch (thrown) {
    // A boxed primitive's valueOf, or an exotic object's keys.
    return { ok: false, reason: `threw at ${renderPath(frame, slot)}: ${describeThrown(thrown)}` }
  }
}

/** A boxed primitive as `JSON.stringify` unwraps it; any other object unchanged. */
function unboxed(value: object): unknown {
  if (types.isNumberObject(value)) return Number(value)
  if (types.isStringObject(value)) return String(value)
  if (types.isBooleanObject(value)) return Boolean.prototype.valueOf.call(value)
  if (types.isBigIntObject(value)) return BigInt.prototype.valueOf.call(value)
  return value
}

/** The JSON bytes a call may resolve, and the setting that says so, for the message that names it. */
export interface ResultBudget {
  bytes: number
  field: string
}

/** The message of a result over its budget; `size` is its exact size, or a bound when conversion stopped early. */
export function overBudget(label: string, size: string, budget: ResultBudget): string {
  return `${label} resolved ${size} bytes of JSON, over its budget of ${budget.bytes} (${budget.field}); ask for less: a page, a filter, fewer fields`
}

/**
 * What a namespace with `convertResults` sends for `value`: the converted value (`undefined`
 * included) and the `leaf` instances it holds, or the message the program's call rejects with,
 * today's wording for each failure.
 */
export function convertResult(label: string, value: unknown, budget: ResultBudget, leaf: ConversionOptions['leaf']): { value: unknown; leaves: object[] } | string {
  const converted = convertAsJson(value, { maxBytes: budget.bytes, leaf })
  if (converted.ok) return { value: converted.value, leaves: converted.leaves }
  if ('overBudget' in converted) return overBudget(label, `more than ${budget.bytes}`, budget)
  return `${label} resolved a value that is not lossless JSON (${converted.reason})`
}

/**
 * A result's exact JSON size and its wire tokens (the tokens `encodeWire`, src/json/wire.ts,
 * writes), in one walk: `value` is a host-realm copy the conversion or the lossless snapshot
 * made, so the host needs none of the realm-safe helpers the worker's side of src/json/ keeps.
 * The size is what `jsonByteLength` counts (an image as its own fields, as `JSON.stringify`
 * writes it); past `maxBytes` no more tokens are written, and only the size is given, for the
 * message that names it. Iterative, so depth is unlimited; a value that is not lossless JSON
 * throws a TypeError, as `encodeWire` does.
 */
export function encodeResult(value: PtcJsonValue, leafFields: (leaf: object) => LeafFields, maxBytes: number): { bytes: number; tokens?: WireTokens } {
  const tokens: WireTokens = []
  const pending: unknown[] = [value]
  let bytes = 0
  while (pending.length > 0) {
    const item = pending.pop()
    let token: unknown = item
    switch (typeof item) {
      case 'string':
        bytes += jsonBytes(item)
        break
      case 'number':
        if (!Number.isFinite(item) || Object.is(item, -0)) throw new TypeError(`encodeResult expects lossless JSON, got ${Object.is(item, -0) ? '-0' : item}`)
        bytes += `${item}`.length
        break
      case 'boolean':
        bytes += item ? 4 : 5
        break
      case 'object': {
        if (item === null) {
          bytes += 4
        } else if (Array.isArray(item)) {
          const count = item.length
          bytes += count === 0 ? 2 : count + 1
          token = { kind: 'array', length: count }
          for (let i = count - 1; i >= 0; i--) pending.push(item[i])
        } else if (isPlainRecord(item)) {
          const keys = Object.keys(item)
          const count = keys.length
          bytes += count === 0 ? 2 : count + 1
          token = { kind: 'object', keys }
          for (let i = count - 1; i >= 0; i--) {
            bytes += jsonBytes(keys[i]!) + 1
            pending.push((item as Record<string, unknown>)[keys[i]!])
          }
        } else {
          // A leaf (a host-issued image), counted as the meter counts it: its own fields.
          bytes += jsonByteLength(item as PtcJsonValue)
          token = { kind: 'leaf', fields: leafFields(item) }
        }
        break
      }
      default:
        throw new TypeError(`encodeResult expects a JSON value, got ${typeof item}`)
    }
    if (bytes <= maxBytes) tokens.push(token)
  }
  return bytes <= maxBytes ? { bytes, tokens } : { bytes }
}

/** A code unit `JSON.stringify` escapes, or a surrogate (which it escapes when alone). */
const ESCAPED_OR_SURROGATE = /["\\\u0000-\u001f\ud800-\udfff]/

/**
 * Exact UTF-8 bytes of `JSON.stringify(text)`: a text with nothing to escape is Node's own count
 * plus the quotes; any other is the meter's, which counts escapes and lone surrogates without
 * copying the text (a tool may resolve a string far over its budget, which must not cost the
 * host a serialized copy before it is refused).
 */
function jsonBytes(text: string): number {
  return ESCAPED_OR_SURROGATE.test(text) ? jsonStringByteLength(text) : Buffer.byteLength(text) + 2
}

function isPlainRecord(value: object): boolean {
  const proto = Object.getPrototypeOf(value) as unknown
  return proto === Object.prototype || proto === null
}
