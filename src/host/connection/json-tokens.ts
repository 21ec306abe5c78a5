/**
 * The tokens of a line of JSON as the host's reader (json-lines.ts) finds and decodes them in
 * a chunk of bytes: where a string or a scalar ends, and the value it stands for, lossless
 * JSON only. Host-only code.
 */
import { StringDecoder } from 'node:string_decoder'

/** The longest number a line may spell: `JSON.stringify` writes at most about 25 characters. */
export const MAX_NUMBER_CHARS = 64
const NUMBER = /^-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?$/
const QUOTE = 0x22
const BACKSLASH = 0x5c

/** What a token that is not lossless JSON decodes to. */
export const INVALID: unique symbol = Symbol('invalid JSON token')

/** What the last `stringEnd` saw besides the end: an escape in the string, one open at the chunk's end. */
export const scan = { escapes: false, escapedAtEnd: false }

/** A non-negative integer of at most 15 digits without a leading zero, or `undefined`. */
function smallInteger(bytes: Buffer, start: number, end: number): number | undefined {
  if (end - start > 15 || (bytes[start] === 0x30 && end - start > 1)) return undefined
  let value = 0
  for (let index = start; index < end; index++) {
    const digit = bytes[index]! - 0x30
    if (digit < 0 || digit > 9) return undefined
    value = value * 10 + digit
  }
  return end > start ? value : undefined
}

const utf8Slice = (bytes: Buffer, start: number, end: number): string =>
  (bytes as unknown as { utf8Slice: (start: number, end: number) => string }).utf8Slice(start, end)

/**
 * The index of the quote that ends the string whose contents start at `from`, -1 when the chunk
 * ends first (`scan.escapedAtEnd` then says whether it ended inside an escape), -2 at a byte a JSON
 * string cannot hold raw: a control character (a newline inside a string means the line ended
 * in it). `escaped`: the first byte is escaped.
 */
export function stringEnd(chunk: Buffer, from: number, escaped: boolean): number {
  const length = chunk.length
  scan.escapes = false
  for (let index = from; index < length; index++) {
    const byte = chunk[index]!
    if (byte < 0x20) return -2
    if (escaped) escaped = false
    else if (byte === QUOTE) return index
    else if (byte === BACKSLASH) escaped = scan.escapes = true
  }
  scan.escapedAtEnd = escaped
  return -1
}

/** The index after a number or literal starting at `from`, -1 when the chunk ends first. */
export function scalarEnd(chunk: Buffer, from: number): number {
  const length = chunk.length
  for (let index = from; index < length; index++) {
    const byte = chunk[index]!
    // Letters, digits, sign, point: whatever else ends the token (validated as a whole).
    if (!((byte >= 0x30 && byte <= 0x39) || (byte >= 0x61 && byte <= 0x7a) || (byte >= 0x41 && byte <= 0x5a) || byte === 0x2d || byte === 0x2b || byte === 0x2e)) {
      return index
    }
    if (index - from > MAX_NUMBER_CHARS) return index
  }
  return -1
}


/** The string token from `start` to `end`, quotes included; `undefined` when it is not JSON. */
export function stringValue(bytes: Buffer, start: number, end: number, escapes: boolean): string | undefined {
  if (!escapes) return utf8Slice(bytes, start + 1, end - 1)
  try {
    return JSON.parse(utf8Slice(bytes, start, end)) as string
  } catch {
    return undefined
  }
}

/** The number or literal from `start` to `end`, or `INVALID`. */
export function scalarValue(bytes: Buffer, start: number, end: number): boolean | null | number | typeof INVALID {
  const first = bytes[start]
  if (first === 0x74 || first === 0x66 || first === 0x6e) {
    const text = bytes.toString('latin1', start, end)
    return text === 'true' ? true : text === 'false' ? false : text === 'null' ? null : INVALID
  }
  const small = smallInteger(bytes, start, end)
  if (small !== undefined) return small
  if (end - start > MAX_NUMBER_CHARS) return INVALID
  const text = bytes.toString('latin1', start, end)
  if (!NUMBER.test(text)) return INVALID
  const number = Number(text)
  // Lossless JSON: JSON.stringify must write back the same number.
  return Number.isFinite(number) && !Object.is(number, -0) ? number : INVALID
}

/**
 * A string token split between pushes, decoded as its bytes arrive (its contents, without the
 * quotes): each piece is decoded from UTF-8 (a character split between pieces waits for the
 * rest) and unescaped up to the last escape it cannot yet finish, so a long string costs each
 * push time in proportion to that push's bytes, and only the join at its end is one step.
 */
export class StringPieces {
  private readonly _decoder = new StringDecoder('utf8')
  private readonly _pieces: string[] = []
  /** Text after the last whole escape: an escape that continues in the next piece. */
  private _carry = ''

  /** False when the piece holds an escape JSON does not have. */
  add(bytes: Buffer): boolean {
    return this._take(this._carry + this._decoder.write(bytes), false)
  }

  /** The string, once its last bytes (before the closing quote) are added; `undefined` when not JSON. */
  end(bytes: Buffer): string | undefined {
    if (!this._take(this._carry + this._decoder.write(bytes) + this._decoder.end(), true)) return undefined
    return this._pieces.join('')
  }

  private _take(text: string, last: boolean): boolean {
    let cut = text.length
    if (!last) {
      // An escape is at most six characters (`\uXXXX`): look for one unfinished at the end.
      for (let index = Math.max(0, text.length - 6); index < text.length; index++) {
        if (text.charCodeAt(index) !== BACKSLASH) continue
        let run = 1
        while (index - run >= 0 && text.charCodeAt(index - run) === BACKSLASH) run++
        if (run % 2 === 0) continue // this backslash is itself escaped
        const whole = text.charCodeAt(index + 1) === 0x75 ? 6 : 2
        if (index + whole > text.length) {
          cut = index
          break
        }
        index += whole - 1
      }
    }
    const piece = text.slice(0, cut)
    this._carry = text.slice(cut)
    if (piece.indexOf('\\') === -1) {
      this._pieces.push(piece)
      return true
    }
    try {
      this._pieces.push(JSON.parse(`"${piece}"`) as string)
      return true
    } catch {
      return false
    }
  }
}
