/**
 * The text a durable journal keeps of a value: its JSON, written without recursion. A program
 * chooses how deep its call arguments nest, and `JSON.stringify` and `isDeepStrictEqual` recurse
 * (a few thousand levels overflow the host's stack), so the journal writes each argument once,
 * with an explicit stack, compares texts, and measures its budget in their bytes.
 */
import type { PtcJsonValue } from '../../seam/types.js'

const CLOSE_ARRAY = Symbol(']')
const CLOSE_OBJECT = Symbol('}')
const COMMA = Symbol(',')
/** A key and its colon (and the comma before it), written before its value. */
class KeyText {
  constructor(readonly text: string) {}
}

/**
 * `JSON.stringify(value)` for a lossless JSON value (a snapshot: plain objects, dense arrays,
 * finite numbers) or a record of them, at any depth. The native one is tried first (it is
 * several times faster); a value nested deeper than the stack allows is written here instead.
 */
export function jsonText(value: PtcJsonValue): string {
  try {
    return JSON.stringify(value)
  } catch (error) {
    if (!(error instanceof RangeError)) throw error
  }
  return deepJsonText(value)
}

function deepJsonText(value: PtcJsonValue): string {
  const parts: string[] = []
  const stack: Array<PtcJsonValue | symbol | KeyText> = [value]
  while (stack.length > 0) {
    const item = stack.pop()!
    if (typeof item === 'symbol') {
      parts.push(item === CLOSE_ARRAY ? ']' : item === CLOSE_OBJECT ? '}' : ',')
    } else if (item instanceof KeyText) {
      parts.push(item.text)
    } else if (typeof item !== 'object' || item === null) {
      parts.push(JSON.stringify(item))
    } else if (Array.isArray(item)) {
      parts.push('[')
      stack.push(CLOSE_ARRAY)
      for (let i = item.length - 1; i >= 0; i--) {
        stack.push(item[i]!)
        if (i > 0) stack.push(COMMA)
      }
    } else {
      parts.push('{')
      stack.push(CLOSE_OBJECT)
      // As JSON.stringify does, a property whose value is undefined is left out.
      const keys = Object.keys(item).filter((key) => item[key] !== undefined)
      for (let i = keys.length - 1; i >= 0; i--) {
        stack.push(item[keys[i]!]!)
        stack.push(new KeyText(`${i > 0 ? ',' : ''}${JSON.stringify(keys[i])}:`))
      }
    }
  }
  return parts.join('')
}

/** At most `max` characters of `text`, marked when cut (never inside a surrogate pair). */
export function preview(text: string, max = 200): string {
  if (text.length <= max) return text
  const end = /[\uD800-\uDBFF]/.test(text[max - 1]!) ? max - 1 : max
  return `${text.slice(0, end)}…`
}

/** UTF-8 bytes of `text`: what the journal's budget counts. */
export function textBytes(text: string): number {
  return Buffer.byteLength(text, 'utf8')
}
