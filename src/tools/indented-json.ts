/**
 * A value as `JSON.stringify(value, null, 2)` writes it, up to a length. Indentation grows with
 * the square of the nesting depth (30 copies of 3 000 nested arrays, 180 KB of JSON, indent past
 * the longest string V8 makes), so a value a reader sees in part is written only that far, and
 * the rest is never walked.
 */
import type { PtcJsonValue } from '../seam/types.js'

export interface IndentedJson {
  /** The indented text, or its first `maxChars` characters when it is longer. */
  text: string
  /** Whether `text` is all of it. */
  complete: boolean
}

const INDENT = 2

/** A container being written: its entries (an object's through its keys) and the next one. */
interface Open {
  container: PtcJsonValue[] | { [key: string]: PtcJsonValue }
  keys: string[] | undefined
  size: number
  next: number
  depth: number
}

/** `value` indented by two spaces, cut at `maxChars`; written without recursion. */
export function indentedJson(value: PtcJsonValue, maxChars: number): IndentedJson {
  const pieces: string[] = []
  let written = 0
  /** Adds `text` as far as it fits; false when some of it did not. */
  const add = (text: string): boolean => {
    const room = maxChars - written
    pieces.push(text.length <= room ? text : text.slice(0, room))
    written += Math.min(text.length, room)
    return text.length <= room
  }
  const newline = (depth: number): boolean => {
    if (!add('\n')) return false
    const room = maxChars - written
    pieces.push(' '.repeat(Math.min(INDENT * depth, room)))
    written += Math.min(INDENT * depth, room)
    return INDENT * depth <= room
  }
  const stack: Open[] = []
  /** Writes a scalar, or a container's opening (its whole text when it is empty). */
  const begin = (entry: PtcJsonValue, depth: number): boolean => {
    if (entry === null || typeof entry !== 'object') return add(JSON.stringify(entry))
    const keys = Array.isArray(entry) ? undefined : Object.keys(entry)
    const size = keys === undefined ? (entry as PtcJsonValue[]).length : keys.length
    if (size === 0) return add(keys === undefined ? '[]' : '{}')
    stack.push({ container: entry, keys, size, next: 0, depth })
    return add(keys === undefined ? '[' : '{')
  }
  let fits = begin(value, 0)
  while (fits && stack.length > 0) {
    const open = stack[stack.length - 1]!
    if (open.next === open.size) {
      stack.pop()
      fits = newline(open.depth) && add(open.keys === undefined ? ']' : '}')
      continue
    }
    const at = open.next++
    fits = (at === 0 || add(',')) && newline(open.depth + 1)
    if (!fits) break
    if (open.keys === undefined) {
      fits = begin((open.container as PtcJsonValue[])[at]!, open.depth + 1)
    } else {
      const key = open.keys[at]!
      fits = add(`${JSON.stringify(key)}: `) && begin((open.container as { [key: string]: PtcJsonValue })[key]!, open.depth + 1)
    }
  }
  return { text: pieces.join(''), complete: fits }
}
