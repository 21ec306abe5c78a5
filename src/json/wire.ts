/**
 * A flat encoding of lossless JSON for crossing a MessagePort. Structured clone recurses on
 * nesting, so values travel as one pre-order token array: scalars stand for themselves and
 * each container is a marker followed by its children.
 */
import type { PtcJsonValue } from '../seam/types.js'
import {
  ArrayPrototype,
  blankList,
  blankRecord,
  finishContainer,
  getPrototypeOf,
  hasOwn,
  isArray,
  isProxy,
  objectKeys,
  ObjectPrototype,
  ownDataValue,
  ownKeys,
  TypeErrorCtor,
} from './intrinsics.js'
import { scalarProblem, type Snapshot } from './lossless.js'
import { describeThrown, quoteKey } from './path.js'

/** Tokens in pre-order: scalars, `{ kind: 'array', length }`, `{ kind: 'object', keys }`, `{ kind: 'leaf', fields }`. */
export type WireTokens = unknown[]

/** The flat description of a leaf (e.g. an image) on the wire. */
export type LeafFields = Record<string, string | number>

/**
 * Encode a snapshot (trusted: a `snapshotJson` copy) into a flat pre-order token array. Objects
 * that are neither arrays nor plain records are leaves and travel as
 * `{ kind: 'leaf', fields: encodeLeaf(leaf) }`. Throws a TypeError on a value that is not
 * lossless JSON at the scalar level, or on a leaf without `encodeLeaf`.
 */
export function encodeWire(value: PtcJsonValue, encodeLeaf?: (leaf: object) => LeafFields): WireTokens {
  if (typeof value !== 'object' || value === null) return [checkedScalar(value)]
  // Both arrays lack a prototype while written, so a setter planted on Array.prototype by the
  // program cannot observe or divert tokens.
  const tokens = blankList()
  const pending = blankList()
  pending[0] = value
  let top = 1
  let count = 0
  while (top > 0) {
    const item = pending[--top]
    if (typeof item !== 'object' || item === null) {
      tokens[count++] = checkedScalar(item)
    } else if (isArray(item)) {
      const length = item.length
      tokens[count++] = { kind: 'array', length }
      for (let i = length - 1; i >= 0; i--) pending[top++] = item[i]
    } else if (isPlainRecord(item)) {
      const keys = objectKeys(item)
      tokens[count++] = { kind: 'object', keys }
      for (let i = keys.length - 1; i >= 0; i--) pending[top++] = (item as Record<string, unknown>)[keys[i] as string]
    } else {
      if (encodeLeaf === undefined) throw new TypeErrorCtor('encodeWire met a leaf object but has no encodeLeaf')
      tokens[count++] = { kind: 'leaf', fields: encodeLeaf(item) }
    }
  }
  finishContainer(tokens, true)
  return tokens
}

function checkedScalar(value: unknown): unknown {
  const problem = scalarProblem(value)
  if (problem !== null) throw new TypeErrorCtor(`encodeWire expects lossless JSON, got ${problem}`)
  return value
}

function isPlainRecord(value: object): boolean {
  const proto = getPrototypeOf(value)
  return proto === ObjectPrototype || proto === null
}

/** An open container while decoding. */
interface Pending {
  readonly copy: Record<string | number, unknown>
  /** Keys of a record, validated and copied; null for a list. */
  readonly keys: string[] | null
  readonly length: number
  index: number
  readonly parent: Pending | null
}

type LeafDecoder = (fields: LeafFields) => object | undefined

/**
 * Decode tokens from an untrusted peer. They arrived by structured clone, so only this realm's
 * plain prototypes are accepted. `decodeLeaf` receives a validated null-prototype copy of a leaf
 * marker's fields and returns the leaf, or undefined to reject it. Never throws.
 */
export function decodeWire(tokens: unknown, decodeLeaf?: LeafDecoder): Snapshot {
  const count = listLength(tokens)
  if (typeof count === 'string') return { ok: false, reason: `wire tokens ${count}` }
  if (count === 0) return { ok: false, reason: 'wire tokens are empty' }
  const list = tokens as unknown[]
  let frame: Pending | null = null
  let root: unknown
  let at = 0
  try {
    for (; at < count; at++) {
      if (at > 0 && frame === null) return malformed('trailing token', at)
      if (!hasOwn(list, at)) return malformed('hole', at)
      const token = list[at]
      let placed: unknown = token
      let opened: Pending | null = null
      if (typeof token !== 'object' || token === null) {
        const problem = scalarProblem(token)
        if (problem !== null) return malformed(problem, at)
      } else {
        // Every child takes at least one token, which bounds what a marker may allocate.
        const kind = markerKind(token)
        const read =
          kind === 'leaf' ? readLeaf(token, decodeLeaf)
          : kind === 'array' || kind === 'object' ? readContainer(token, kind, count - at - 1, frame)
          : kind
        if (typeof read === 'string') return malformed(read, at)
        if (kind === 'leaf') {
          placed = read
        } else {
          opened = read as Pending
          placed = opened.copy
        }
      }
      if (frame === null) {
        root = placed
      } else {
        frame.copy[frame.keys === null ? frame.index : (frame.keys[frame.index] as string)] = placed
        frame.index++
      }
      if (opened !== null) frame = opened
      // Close every container this token completed.
      while (frame !== null && frame.index === frame.length) {
        finishContainer(frame.copy, frame.keys === null)
        frame = frame.parent
      }
    }
  } catch (thrown) {
    return malformed(`reading threw (${describeThrown(thrown)})`, at)
  }
  if (frame !== null) return { ok: false, reason: 'incomplete container at end of tokens' }
  return { ok: true, value: root as PtcJsonValue }
}

function malformed(what: string, at: number): Snapshot {
  return { ok: false, reason: `${what} at token ${at}` }
}

/** `'array'`, `'object'` or `'leaf'` for a well-formed marker, otherwise what is wrong. */
function markerKind(token: object): string {
  if (isProxy(token)) return 'proxy token'
  if (isArray(token) || !isPlainRecord(token)) return 'token with a foreign prototype'
  if (ownKeys(token).length !== 2) return 'marker without exactly two fields'
  const kind = ownDataValue(token, 'kind')
  return kind === 'array' || kind === 'object' || kind === 'leaf' ? kind : 'marker with an unknown kind'
}

function readContainer(token: object, kind: 'array' | 'object', remaining: number, parent: Pending | null): Pending | string {
  if (kind === 'array') {
    const length = ownDataValue(token, 'length')
    if (!isCount(length)) return 'array marker without a valid length'
    if (length > remaining) return 'array length exceeds the remaining tokens'
    return { copy: blankList() as Record<number, unknown>, keys: null, length, index: 0, parent }
  }
  const keys = ownDataValue(token, 'keys')
  const length = listLength(keys)
  if (typeof length === 'string') return `object marker keys ${length}`
  if (length > remaining) return 'object keys exceed the remaining tokens'
  const list = blankList() as string[]
  const copy = blankRecord()
  for (let i = 0; i < length; i++) {
    if (!hasOwn(keys as unknown[], i)) return 'object marker keys with a hole'
    const key = (keys as unknown[])[i]
    if (typeof key !== 'string') return 'object marker with a non-string key'
    // The copy has no prototype yet, so a repeated "__proto__" is caught like any other key.
    if (hasOwn(copy, key)) return `object marker with duplicate key ${quoteKey(key)}`
    copy[key] = null
    list[i] = key
  }
  finishContainer(list, true)
  return { copy, keys: list, length, index: 0, parent }
}

/** A non-negative safe integer other than -0. */
function isCount(value: unknown): value is number {
  return typeof value === 'number' && value % 1 === 0 && value >= 0 && value <= 2 ** 53 - 1 && 1 / value > 0
}

/** The leaf a host decoder makes from a marker's fields, checked to be a flat record first. */
function readLeaf(token: object, decodeLeaf: LeafDecoder | undefined): object | string {
  if (decodeLeaf === undefined) return 'leaf marker without a leaf decoder'
  const fields = ownDataValue(token, 'fields')
  if (typeof fields !== 'object' || fields === null || isProxy(fields)) return 'leaf fields not an object'
  if (isArray(fields) || !isPlainRecord(fields)) return 'leaf fields with a foreign prototype'
  const keys = ownKeys(fields)
  const copy = blankRecord() as LeafFields
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i] as string | symbol
    if (typeof key === 'symbol') return 'leaf fields with a symbol key'
    const field = ownDataValue(fields, key)
    if (typeof field !== 'string' && (typeof field !== 'number' || scalarProblem(field) !== null)) {
      return `leaf field ${quoteKey(key)} not a string or finite number`
    }
    copy[key] = field
  }
  const leaf = decodeLeaf(copy)
  return typeof leaf === 'object' && leaf !== null ? leaf : 'rejected leaf'
}

/**
 * The length of a dense-looking, undecorated array of this realm, or why it is not one. Holes
 * are found by the caller while reading.
 */
function listLength(value: unknown): number | string {
  if (typeof value !== 'object' || value === null || isProxy(value) || !isArray(value)) return 'not an array'
  if (getPrototypeOf(value) !== ArrayPrototype) return 'with a foreign prototype'
  const length = value.length
  const keys = ownKeys(value)
  // Indices come first in own-key order, then `length`, then anything extra.
  for (let i = length; i < keys.length; i++) {
    const key = keys[i] as string | symbol
    if (key !== 'length') return typeof key === 'symbol' ? 'with a symbol key' : `with extra property ${quoteKey(key)}`
  }
  return length
}
