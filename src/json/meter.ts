/**
 * Exact UTF-8 byte costs of `JSON.stringify` output, computed without serializing, so the
 * output ledger can meter and cut values of any size or depth.
 */
import type { PtcJsonValue } from '../seam/types.js'
import { blankList, charCodeAt, isArray, objectKeys, regExpExec, stringSlice, TypeErrorCtor } from './intrinsics.js'

/** Bytes `JSON.stringify` writes for each ASCII code unit: escapes cost 2 or 6 (`\u00XX`). */
const ASCII_COST = new Uint8Array(128).fill(1)
for (let code = 0; code < 0x20; code++) ASCII_COST[code] = 6
const TWO_BYTE_ESCAPES = [0x08, 0x09, 0x0a, 0x0c, 0x0d, 0x22, 0x5c]
for (let index = 0; index < TWO_BYTE_ESCAPES.length; index++) ASCII_COST[TWO_BYTE_ESCAPES[index]!] = 2

/** The first code unit that does not cost exactly one byte. */
const NOT_PLAIN = /[^\x20\x21\x23-\x5b\x5d-\x7f]/g
/** Below this length a direct loop beats starting the regular expression. */
const SHORT = 32

/**
 * Cost of the code point at `index`. Only a well-formed surrogate pair costs 4 (and spans two
 * code units); a lone surrogate is written as a 6-byte `\udXXX` escape.
 */
function costAt(text: string, index: number): number {
  const code = charCodeAt(text, index)
  if (code < 0x80) return ASCII_COST[code] as number
  if (code < 0x800) return 2
  if (code < 0xd800 || code > 0xdfff) return 3
  if (code <= 0xdbff && index + 1 < text.length) {
    const next = charCodeAt(text, index + 1)
    if (next >= 0xdc00 && next <= 0xdfff) return 4
  }
  return 6
}

/** Index of the first code unit in `text` that needs more than one byte, or its length. */
function plainPrefixLength(text: string): number {
  if (text.length < SHORT) {
    for (let i = 0; i < text.length; i++) if (costAt(text, i) !== 1) return i
    return text.length
  }
  NOT_PLAIN.lastIndex = 0
  const match = regExpExec(NOT_PLAIN, text)
  return match === null ? text.length : match.index
}

/** Exact UTF-8 byte length of `JSON.stringify(text)`, quotes included. */
export function jsonStringByteLength(text: string): number {
  const length = text.length
  const plain = plainPrefixLength(text)
  let bytes = plain + 2
  for (let i = plain; i < length; ) {
    const cost = costAt(text, i)
    bytes += cost
    i += cost === 4 ? 2 : 1
  }
  return bytes
}

/**
 * The longest prefix of `text`, cut on a code-point boundary (never inside a surrogate pair),
 * whose JSON string serialization, quotes included, takes at most `maxBytes` bytes. Returns
 * `''` when even `""` does not fit. Work is bounded by the budget, not by the text's length.
 */
export function fitJsonString(text: string, maxBytes: number): string {
  if (!(maxBytes >= 2)) return ''
  const budget = maxBytes - 2
  const length = text.length
  // Plain characters cost one byte each, so a plain head of `budget` characters fits exactly.
  const head = length > budget ? stringSlice(text, 0, budget) : text
  const plain = plainPrefixLength(head)
  if (plain === head.length) return head
  let bytes = plain
  let end = plain
  while (end < length) {
    const cost = costAt(text, end)
    if (bytes + cost > budget) break
    bytes += cost
    end += cost === 4 ? 2 : 1
  }
  return end === length ? text : stringSlice(text, 0, end)
}

/**
 * Exact UTF-8 byte length of `JSON.stringify(value)` for a value of trusted shape (a
 * `snapshotJson` copy without leaves). Iterative, so depth is unlimited.
 */
export function jsonByteLength(value: PtcJsonValue): number {
  // Order does not matter for a sum, so a plain stack suffices. It has no prototype, so
  // writes cannot reach setters a program planted on Array.prototype.
  const pending = blankList()
  pending[0] = value
  let top = 1
  let bytes = 0
  while (top > 0) {
    const item = pending[--top]
    switch (typeof item) {
      case 'string':
        bytes += jsonStringByteLength(item)
        break
      case 'number':
        if (item - item !== 0) throw new TypeErrorCtor(`jsonByteLength expects finite numbers, got ${item}`)
        bytes += `${item}`.length
        break
      case 'boolean':
        bytes += item ? 4 : 5
        break
      case 'object': {
        if (item === null) {
          bytes += 4
        } else if (isArray(item)) {
          const count = item.length
          bytes += count === 0 ? 2 : count + 1
          for (let i = 0; i < count; i++) pending[top++] = item[i]
        } else {
          const keys = objectKeys(item)
          const count = keys.length
          // Braces and commas, then each key as a JSON string plus its colon.
          bytes += count === 0 ? 2 : count + 1
          for (let i = 0; i < count; i++) {
            const key = keys[i] as string
            bytes += jsonStringByteLength(key) + 1
            pending[top++] = (item as Record<string, unknown>)[key]
          }
        }
        break
      }
      default:
        throw new TypeErrorCtor(`jsonByteLength expects a JSON value, got ${typeof item}`)
    }
  }
  return bytes
}
