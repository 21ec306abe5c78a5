/**
 * A value as `JSON.stringify(value, null, indent)` writes it, up to a length, and without
 * recursion: a program chooses how deep its values nest, and the native writer overflows the
 * stack at a few thousand levels. Indentation grows with the square of the nesting depth (30
 * copies of 3 000 nested arrays, 180 KB of JSON, indent past the longest string V8 makes), so
 * a value a reader sees in part is written only that far, and the rest is never walked.
 */
import type { PtcJsonValue } from '../seam/types.js'

export interface IndentedJson {
  /** The indented text, or its first `maxChars` characters when it is longer. */
  text: string
  /** Whether `text` is all of it. */
  complete: boolean
}

/** A container being written: its entries (an object's through its keys) and the next one. */
interface Open {
  container: PtcJsonValue[] | { [key: string]: PtcJsonValue }
  keys: string[] | undefined
  size: number
  next: number
  depth: number
}

/** `value` indented by `indent` spaces (0: compact, on one line), cut at `maxChars`. */
export function indentedJson(value: PtcJsonValue, maxChars: number, indent = 2): IndentedJson {
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
    if (indent === 0) return true
    if (!add('\n')) return false
    const room = maxChars - written
    pieces.push(' '.repeat(Math.min(indent * depth, room)))
    written += Math.min(indent * depth, room)
    return indent * depth <= room
  }
  const colon = indent === 0 ? ':' : ': '
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
      fits = add(`${JSON.stringify(key)}${colon}`) && begin((open.container as { [key: string]: PtcJsonValue })[key]!, open.depth + 1)
    }
  }
  return { text: pieces.join(''), complete: fits }
}
