/**
 * JSON text of a value the runtime built (a `snapshotJson` copy, or a message holding such
 * copies), written without recursion and without meeting anything a program planted: only
 * strings and numbers go through `JSON.stringify`, which looks up no `toJSON` on a primitive.
 * The text is exactly `jsonByteLength` bytes long for a lossless value (no whitespace), so a
 * budget counted in JSON bytes counts what crosses. Runs in the program's realm (the worker).
 */
import { arrayJoin, blankList, charCodeAt, isArray, objectKeys, stringify } from './intrinsics.js'

/**
 * Collects text in flat pieces. Appending to one string builds a rope of a node per append
 * (tens of bytes each: 1.3 M empty objects took more memory than a worker's heap); reading a
 * character flattens a rope, so the current piece is flattened every few hundred appends and
 * set aside once long, and the pieces are joined once at the end.
 */
class TextPieces {
  private readonly _pieces = blankList()
  private _count = 0
  private _piece = ''
  private _appends = 0

  add(text: string): void {
    this._piece += text
    if (++this._appends < 512) return
    this._appends = 0
    charCodeAt(this._piece, 0)
    if (this._piece.length < 16_384) return
    this._pieces[this._count++] = this._piece
    this._piece = ''
  }

  join(): string {
    this._pieces[this._count++] = this._piece
    return arrayJoin(this._pieces, '')
  }
}

/**
 * `value` as JSON text, as `JSON.stringify` writes it for records, lists, strings, finite numbers,
 * booleans and null; a record's `undefined` fields are left out. Any depth; the writer keeps one
 * entry per open container, whatever its width. `leaf` gives the record or list written in place
 * of each object met (itself, or e.g. an image's fields), as a replacer does for `JSON.stringify`.
 */
export function jsonText(value: unknown, leaf?: (value: object) => object): string {
  const text = new TextPieces()
  // The open containers, innermost last: each with its keys (a record's) and the next position.
  const containers = blankList() as object[]
  const keyLists = blankList() as Array<string[] | null>
  const positions = blankList() as number[]
  const written = blankList() as boolean[]
  let depth = 0
  let next: unknown = value
  for (;;) {
    if (next !== undefined) {
      if (typeof next !== 'object' || next === null) {
        text.add(typeof next === 'string' || typeof next === 'number' ? stringify(next) : next === true ? 'true' : next === false ? 'false' : 'null')
      } else {
        const container = leaf === undefined ? next : leaf(next)
        const keys = isArray(container) ? null : objectKeys(container)
        text.add(keys === null ? '[' : '{')
        containers[depth] = container
        keyLists[depth] = keys
        positions[depth] = 0
        written[depth++] = false
      }
      next = undefined
    }
    if (depth === 0) return text.join()
    const top = depth - 1
    const container = containers[top]!
    const keys = keyLists[top]!
    const position = positions[top]!
    if (position === (keys === null ? (container as unknown[]).length : keys.length)) {
      text.add(keys === null ? ']' : '}')
      depth--
      continue
    }
    positions[top] = position + 1
    if (keys === null) {
      if (position > 0) text.add(',')
      next = (container as unknown[])[position]
      // A hole or an undefined element (never in a snapshot) is written as JSON.stringify does.
      if (next === undefined) text.add('null')
      continue
    }
    const key = keys[position]!
    next = (container as Record<string, unknown>)[key]
    if (next === undefined) continue
    text.add(written[top] ? `,${stringify(key)}:` : `${stringify(key)}:`)
    written[top] = true
  }
}
