/**
 * A string token of a line of JSON split between pushes of the host's reader (json-lines.ts),
 * decoded as its bytes arrive. Host-only code.
 */
import { StringDecoder } from 'node:string_decoder'

const BACKSLASH = 0x5c

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
