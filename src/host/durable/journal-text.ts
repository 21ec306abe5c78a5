/**
 * The text a durable journal keeps of a value: its JSON, written without recursion. A program
 * chooses how deep its call arguments nest, and `JSON.stringify` and `isDeepStrictEqual` recurse
 * (a few thousand levels overflow the host's stack), so the journal writes each argument once,
 * with an explicit stack, compares texts, and measures its budget in their bytes.
 */
import { jsonText as deepJsonText } from '../../json/text.js'
import type { PtcJsonValue } from '../../seam/types.js'

/**
 * `JSON.stringify(value)` for a lossless JSON value (a snapshot: plain objects, dense arrays,
 * finite numbers) or a record of them, at any depth. The native one is tried first (it is
 * several times faster); a value nested deeper than the stack allows is written by the
 * runtime's writer without recursion, which keeps one entry per open container however wide
 * (one that pushed every element held 3 million zeros beside a deep list 0.75 s, against 0.18).
 */
export function jsonText(value: PtcJsonValue): string {
  try {
    return JSON.stringify(value)
  } catch (error) {
    if (!(error instanceof RangeError)) throw error
  }
  return deepJsonText(value)
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
