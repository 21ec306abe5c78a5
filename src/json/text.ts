/**
 * JSON text of a value the runtime built (a `snapshotJson` copy, or a message holding such
 * copies), written without recursion and without meeting anything a program planted: only
 * strings and numbers go through `JSON.stringify`, which looks up no `toJSON` on a primitive.
 * The text is exactly `jsonByteLength` bytes long for a lossless value (no whitespace), so a
 * budget counted in JSON bytes counts what crosses. Runs in the program's realm (the worker).
 */
import { blankList, isArray, objectKeys, stringify } from './intrinsics.js'

/** A piece of punctuation on the writer's stack, told apart from a value by being boxed. */
interface Raw {
  readonly raw: string
}

const CLOSE_LIST: Raw = { raw: ']' }
const CLOSE_RECORD: Raw = { raw: '}' }
const COMMA: Raw = { raw: ',' }

/**
 * `value` as JSON text, as `JSON.stringify` writes it for records, lists, strings, finite numbers,
 * booleans and null; a record's `undefined` fields are left out. Any depth.
 */
export function jsonText(value: unknown): string {
  const pending = blankList()
  const raws = blankList() as boolean[]
  let top = 0
  pending[top] = value
  raws[top++] = false
  let text = ''
  while (top > 0) {
    top--
    const item = pending[top]
    if (raws[top] === true) {
      text += (item as Raw).raw
      continue
    }
    if (typeof item !== 'object' || item === null) {
      text += typeof item === 'string' || typeof item === 'number' ? stringify(item) : item === true ? 'true' : item === false ? 'false' : 'null'
      continue
    }
    if (isArray(item)) {
      text += '['
      pending[top] = CLOSE_LIST
      raws[top++] = true
      for (let index = item.length - 1; index >= 0; index--) {
        pending[top] = item[index]
        raws[top++] = false
        if (index > 0) {
          pending[top] = COMMA
          raws[top++] = true
        }
      }
      continue
    }
    text += '{'
    pending[top] = CLOSE_RECORD
    raws[top++] = true
    const keys = objectKeys(item)
    let first = true
    for (let index = keys.length - 1; index >= 0; index--) {
      const key = keys[index]!
      const field = (item as Record<string, unknown>)[key]
      if (field === undefined) continue
      if (!first) {
        pending[top] = COMMA
        raws[top++] = true
      }
      first = false
      pending[top] = field
      raws[top++] = false
      pending[top] = { raw: `${stringify(key)}:` }
      raws[top++] = true
    }
  }
  return text
}
