/**
 * Lossless JSON: validate a value a program produced and detach a deep copy of it, in one
 * iterative pass that reads every property exactly once.
 *
 * A value is lossless JSON when a JSON round trip returns it unchanged: `null`, booleans,
 * strings (any UTF-16, lone surrogates included), finite numbers other than `-0`, dense arrays
 * without extra properties, and plain or null-prototype objects with only enumerable string
 * keys. Everything else is refused with the path to the first offending value: `undefined`
 * inside a value, `NaN`, `±Infinity`, `-0`, BigInt, symbols, functions, holes, class instances
 * (`Date`, `Map`, typed arrays, boxed primitives), proxies, cycles and throwing getters. Shared
 * references are copied, depth is unlimited, and the check holds whatever a program did to
 * `Object`, `Array`, `JSON`, the prototypes or `Function.prototype.toString`.
 */
import type { PtcJsonValue } from '../seam/types.js'
import {
  blankList,
  blankRecord,
  finishContainer,
  getPrototypeOf,
  hasOwn,
  isArray,
  isBoxedPrimitive,
  isProxy,
  ObjectSet,
  ownDataValue,
  ownKeys,
  propertyIsEnumerable,
} from './intrinsics.js'
import { describeThrown, quoteKey, renderPath, type PathNode, type Slot } from './path.js'
import { describeInstance, isListPrototype, isRecordPrototype } from './realm.js'

/**
 * The outcome of validating a value: a detached copy, or why the value is not lossless JSON. A
 * container's copy checked against `maxKeys` says how many keys its objects hold in all (`keys`)
 * and how many values it holds, itself included (`values`: lists, objects, strings, numbers,
 * booleans and nulls, each one; keys are not values).
 */
export type Snapshot<T = PtcJsonValue> = { ok: true; value: T; keys?: number; values?: number } | { ok: false; reason: string; tooManyKeys?: true }

/** How {@link snapshotJson} treats special objects. */
export interface SnapshotOptions {
  /**
   * Accept special objects (e.g. host-issued images) as opaque leaves: return a replacement
   * (kept by reference in the copy) or undefined to treat the object normally. Called for every
   * non-proxy object/array BEFORE the prototype check.
   */
  leaf?: (value: object) => object | undefined
  /**
   * Refuse a value with an object of more than `perObject` keys, more than `total` keys in all
   * its objects, or more than `values` values, itself included (the failure then has
   * `tooManyKeys`): what the host would refuse to read.
   */
  maxKeys?: { perObject: number; total: number; values: number }
}

type KeyBounds = NonNullable<SnapshotOptions['maxKeys']>

type Leaf = NonNullable<SnapshotOptions['leaf']>

/**
 * An open container: the source being read and the copy being filled. Frames are object
 * literals, whose properties are defined rather than assigned, so a setter the program planted
 * on Object.prototype never sees them.
 */
interface Frame extends PathNode {
  readonly source: object
  readonly copy: Record<Slot, unknown>
  /** Own keys of a record; null for a list. */
  readonly keys: (string | symbol)[] | null
  readonly length: number
  readonly parent: Frame | null
  index: number
}

/**
 * Validate `value` and detach it: the copy holds only fresh plain objects (own data
 * properties, so a `"__proto__"` key stays an own key), fresh arrays, primitives and leaves
 * accepted by `options.leaf`. Shared references are copied; identity is not preserved. A
 * top-level `undefined` is rejected too: callers that treat it as "no value" check first.
 * Never throws; a throwing getter yields a reason that names it.
 */
export function snapshotJson(value: unknown, options?: SnapshotOptions): Snapshot {
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return { ok: true, value }
    case 'object':
      if (value === null) return { ok: true, value }
      break
    default: {
      const problem = scalarProblem(value)
      return problem === null ? { ok: true, value: value as number } : fail(problem, null, null)
    }
  }
  const leaf = options === undefined ? undefined : ownDataValue(options, 'leaf')
  const maxKeys = options === undefined ? undefined : ownDataValue(options, 'maxKeys')
  return walk(value, typeof leaf === 'function' ? (leaf as Leaf) : undefined, maxKeys as KeyBounds | undefined)
}

/**
 * What is wrong with a scalar (`NaN`, `-0`, `undefined`…), or null when it is a valid JSON
 * scalar (null included). Internal to `src/json`; the wire codec shares it.
 */
export function scalarProblem(value: unknown): string | null {
  switch (typeof value) {
    case 'number':
      if (value - value !== 0) return value !== value ? 'NaN' : value > 0 ? 'Infinity' : '-Infinity'
      return value === 0 && 1 / value < 0 ? '-0' : null
    case 'string':
    case 'boolean':
      return null
    case 'object':
      return value === null ? null : 'object'
    case 'undefined':
      return 'undefined'
    case 'bigint':
      return 'bigint'
    case 'symbol':
      return 'symbol'
    default:
      return 'function'
  }
}

function fail(what: string, node: PathNode | null, slot: Slot | null): Snapshot {
  return { ok: false, reason: `${what} at ${renderPath(node, slot)}` }
}

function tooManyKeys(what: string, node: PathNode | null, slot: Slot | null): Snapshot {
  return { ok: false, reason: `${what} at ${renderPath(node, slot)}`, tooManyKeys: true }
}

function walk(root: object, leaf: Leaf | undefined, maxKeys: KeyBounds | undefined): Snapshot {
  const ancestors = new ObjectSet()
  let keysInAll = 0
  let values = 0
  let frame: Frame | null = null
  let slot: Slot | null = null
  let value: unknown = root
  let rootCopy: unknown
  try {
    for (;;) {
      // Place `value` at `slot` of `frame`; a container opens a frame that the loop below reads.
      // Counted before a container's keys are read.
      if (maxKeys !== undefined && ++values > maxKeys.values) return tooManyKeys(`more than ${maxKeys.values} values in all`, frame, slot)
      if (typeof value === 'object' && value !== null) {
        if (isProxy(value)) return fail('proxy', frame, slot)
        const replacement = leaf === undefined ? undefined : leaf(value)
        if (replacement !== undefined) {
          if (frame === null) return { ok: true, value: replacement as PtcJsonValue }
          frame.copy[slot as Slot] = replacement
        } else {
          if (ancestors.has(value)) return fail('cycle', frame, slot)
          const opened = open(value, frame, slot)
          if (typeof opened === 'string') return fail(opened, frame, slot)
          if (opened.keys !== null && maxKeys !== undefined) {
            keysInAll += opened.length
            if (opened.length > maxKeys.perObject) return tooManyKeys(`an object of more than ${maxKeys.perObject} keys`, frame, slot)
            if (keysInAll > maxKeys.total) return tooManyKeys(`more than ${maxKeys.total} keys in all`, frame, slot)
          }
          ancestors.add(value)
          if (frame === null) rootCopy = opened.copy
          else frame.copy[slot as Slot] = opened.copy
          frame = opened
        }
      } else {
        const problem = scalarProblem(value)
        if (problem !== null) return fail(problem, frame, slot)
        ;(frame as Frame).copy[slot as Slot] = value
      }

      // Find the next unread slot, closing every finished container on the way up.
      for (;;) {
        if (frame === null) return maxKeys === undefined ? { ok: true, value: rootCopy as PtcJsonValue } : { ok: true, value: rootCopy as PtcJsonValue, keys: keysInAll, values }
        if (frame.index < frame.length) break
        const { source, keys, copy } = frame
        if (keys === null && (source as unknown[]).length !== frame.length) {
          return fail('array length changed', frame.parent, frame.slot)
        }
        finishContainer(copy, keys === null)
        ancestors.delete(source)
        frame = frame.parent
      }
      const index = frame.index++
      const source = frame.source as Record<Slot, unknown>
      if (frame.keys === null) {
        slot = index
        // Own-ness is checked right before the single read, so no getter runs in between.
        if (!hasOwn(source, index)) {
          const changed = (source as unknown as unknown[]).length !== frame.length
          return changed ? fail('array length changed', frame.parent, frame.slot) : fail('hole', frame, index)
        }
      } else {
        const key = frame.keys[index] as string | symbol
        if (typeof key === 'symbol') return fail('symbol key', frame.parent, frame.slot)
        slot = key
        if (!propertyIsEnumerable(source, key)) {
          const what = hasOwn(source, key) ? 'non-enumerable key' : 'vanished key'
          return fail(`${what} ${quoteKey(key)}`, frame.parent, frame.slot)
        }
      }
      try {
        value = source[slot]
      } catch (thrown) {
        return { ok: false, reason: `getter threw at ${renderPath(frame, slot)}: ${describeThrown(thrown)}` }
      }
    }
  } catch (thrown) {
    // Only exotic objects or a throwing `leaf` get here (e.g. a module namespace whose
    // binding is not initialised yet).
    return { ok: false, reason: `threw at ${renderPath(frame, slot)}: ${describeThrown(thrown)}` }
  }
}

/** A frame for a container that passed the shape checks, or what is wrong with it. */
function open(source: object, parent: Frame | null, slot: Slot | null): Frame | string {
  const proto = getPrototypeOf(source)
  if (isArray(source)) {
    if (!isListPrototype(proto)) return describeInstance(proto)
    const length = (source as unknown[]).length
    const keys = ownKeys(source)
    // Exactly the indices plus `length`; a missing index is reported as a hole while reading.
    if (keys.length !== length + 1) {
      const extra = extraListKey(keys, length)
      if (extra !== null) return extra
    }
    const copy = blankList() as unknown as Record<Slot, unknown>
    return { source, copy, keys: null, length, parent, slot, index: 0 }
  }
  if (!isRecordPrototype(proto)) return describeInstance(proto)
  // JSON.stringify unwraps boxed primitives, so copying their own keys would disagree with it.
  if (isBoxedPrimitive(source)) return 'boxed primitive'
  const keys = ownKeys(source)
  return { source, copy: blankRecord(), keys, length: keys.length, parent, slot, index: 0 }
}

function extraListKey(keys: (string | symbol)[], length: number): string | null {
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i] as string | symbol
    if (typeof key === 'symbol') return 'symbol key'
    if (key === 'length') continue
    const index = +key
    if (!(index >>> 0 === index && index < length && `${index}` === key)) {
      return `array with extra property ${quoteKey(key)}`
    }
  }
  return null
}
