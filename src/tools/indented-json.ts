/**
 * A value as `JSON.stringify(value, null, 2)` writes it, within a length. Indentation grows with
 * the square of the nesting depth (25 copies of 3 000 nested arrays, 150 KB of JSON, indent to
 * 450 million characters), so a value a reader sees in part is never written in full: the text
 * stops at the length asked, and the rest is only counted.
 */
import type { PtcJsonValue } from '../seam/types.js'

export interface IndentedJson {
  /** The first `maxChars` characters of the indented text (all of it when it fits). */
  text: string
  /** The length of the whole indented text. */
  length: number
}

const INDENT = 2

/** A container being written: its entries and the next one. */
interface Open {
  entries: PtcJsonValue[]
  keys: string[] | undefined
  next: number
  depth: number
}

/** `value` indented by two spaces, cut at `maxChars`; written without recursion. */
export function indentedJson(value: PtcJsonValue, maxChars: number): IndentedJson {
  const pieces: string[] = []
  let written = 0
  let length = 0
  const add = (text: string): void => {
    length += text.length
    if (written >= maxChars) return
    const piece = text.length <= maxChars - written ? text : text.slice(0, maxChars - written)
    pieces.push(piece)
    written += piece.length
  }
  const newline = (depth: number): void => {
    const spaces = INDENT * depth
    length += 1 + spaces
    if (written < maxChars) {
      const piece = `\n${' '.repeat(Math.min(spaces, maxChars - written - 1))}`
      pieces.push(piece)
      written += piece.length
    }
  }
  const stack: Open[] = []
  /** Writes a scalar whole, or a container's opening (and, when empty, its end). */
  const begin = (entry: PtcJsonValue, depth: number): void => {
    if (entry === null || typeof entry !== 'object') return add(JSON.stringify(entry))
    const keys = Array.isArray(entry) ? undefined : Object.keys(entry)
    const entries = keys === undefined ? (entry as PtcJsonValue[]) : keys.map((key) => (entry as Record<string, PtcJsonValue>)[key]!)
    const [opening, closing] = keys === undefined ? ['[', ']'] : ['{', '}']
    if (entries.length === 0) return add(opening + closing)
    add(opening)
    stack.push({ entries, keys, next: 0, depth })
  }
  begin(value, 0)
  while (stack.length > 0) {
    const open = stack[stack.length - 1]!
    if (open.next === open.entries.length) {
      stack.pop()
      newline(open.depth)
      add(open.keys === undefined ? ']' : '}')
      continue
    }
    const at = open.next++
    if (at > 0) add(',')
    newline(open.depth + 1)
    if (open.keys !== undefined) add(`${JSON.stringify(open.keys[at])}: `)
    begin(open.entries[at]!, open.depth + 1)
  }
  return { text: pieces.join(''), length }
}
