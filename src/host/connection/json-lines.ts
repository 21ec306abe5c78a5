/**
 * The host's reader of lines of JSON from a program's side (a helper's channel, a stream
 * entry's lines, a thread worker's messages): an incremental parser that builds each line's
 * value as its bytes arrive, so the host never holds a whole frame's text and then parses it in
 * one step. Each push costs time in proportion to the bytes pushed, and a line is refused as
 * soon as it passes a bound, before the rest of it costs anything:
 *
 * - `maxLineBytes`: the length of one line;
 * - `maxDepth`: how deeply its containers nest (the reader keeps one stack entry per level);
 * - `shape`: where a container may open at all, how many bytes the value it opens may take
 *   (what may be large in a frame is a call's arguments or a completion; everything else of a
 *   frame is a few fields, and a container where the protocol has none is refused at its first
 *   byte), how many bytes a string there may take (a bounded place's own bytes, or the bound of
 *   a string of the protocol: a failure's message, an entry of output; refused at the first
 *   byte past it, before the string is built), and how many elements a list or keys an object
 *   of the protocol may hold (refused at the first past it);
 * - `dataKeys`: how many keys the program data of a line (the values of bounded places) may hold,
 *   in one object and in all together, and how many values (lists, objects, strings, numbers,
 *   booleans, nulls), refused at the first past any: bytes alone do not bound the time V8 takes
 *   to build objects of millions of distinct keys, nor the memory of millions of short values.
 *
 * Values are lossless JSON (src/json/lossless.ts): finite numbers other than -0, no repeated
 * key in an object, `__proto__` an own key like any other. Host-only code: it never runs in a
 * program's realm.
 */
import { StringPieces } from './string-pieces.js'

/**
 * Where containers may open in a line, as data the reader walks alongside the value it builds
 * (no callback per container): the kinds of container allowed at this place (`none`: a scalar
 * only), a bound on the bytes of the value here (`Infinity` for none; a string given directly
 * here is held to it too; below a bounded value nothing is asked again), a bound on the bytes of
 * a string here (`string`, quotes and escapes included, as the line spells it; it comes first),
 * how many elements an array opened here may hold (`maxElements`: the line is refused
 * at the first one past `count`, and `why`, the field and the rule, is the reader's `refusal`),
 * how many keys an object opened here may hold (`maxKeys`, likewise), and the places below it,
 * by key or array index (`children`) or for every element (`elements`). A place not described
 * holds no container.
 */
export interface JsonShape {
  readonly kinds: 'object' | 'array' | 'any' | 'none'
  readonly bytes: number
  /** A string here takes at most `bytes` of the line (quotes included); `why` is the refusal. */
  readonly string?: { readonly bytes: number; readonly why: string }
  readonly maxElements?: { readonly count: number; readonly why: string }
  readonly maxKeys?: { readonly count: number; readonly why: string }
  /** What the refusal of too many keys calls a bounded value opened here (`"args"`). */
  readonly field?: string
  readonly children?: Readonly<Record<string, JsonShape>>
  readonly elements?: JsonShape
}

export interface JsonLinesLimits {
  maxLineBytes: number
  maxDepth: number
  /** The root container's place. */
  shape: JsonShape
  /** Keys of a line's program data (per object, all of the line's together), its values in all, and why a line broke one. */
  dataKeys?: {
    readonly perObject: number
    readonly perLine: number
    readonly valuesPerLine: number
    readonly why: (field: string, broke: 'object' | 'keys' | 'values') => string
  }
}

/**
 * The bytes each bounded value (a call's arguments, a completion) took on the line it arrived
 * in: what `jsonByteLength` would count for what the worker wrote, kept so that a large value is
 * not walked again on the host's thread.
 */
export const ARRIVED_BYTES = new WeakMap<object, number>()

/**
 * The values each bounded value holds, itself included (lists, objects, strings, numbers,
 * booleans, nulls; not keys): what the value holds in the host's memory beyond its bytes (a list
 * nested a million deep is 2 MB of JSON and 56 MB here).
 */
export const ARRIVED_VALUES = new WeakMap<object, number>()

const QUOTE = 0x22
const NEWLINE = 0x0a

/** An open container and the key its next value goes to. */
interface Open {
  readonly value: Record<string, unknown> | unknown[]
  readonly isArray: boolean
  /** The object key read last, waiting for its value; `undefined` before it and after. */
  key: string | undefined
  /** An object's keys so far (counting them again would walk the object). */
  keys: number
  /** Its place in the shape; `undefined` inside a bounded value, where nothing is asked. */
  readonly shape: JsonShape | undefined
}

/** What the parser expects next. */
const enum Expect {
  Value,
  /** After `[`: a value or `]`. */
  ValueOrClose,
  /** After `{` : a key or `}`. */
  KeyOrClose,
  Key,
  Colon,
  /** After a value inside a container: `,` or its close. */
  CommaOrClose,
  /** The root value is complete: only whitespace until the newline. */
  End,
}

/**
 * Splits a byte stream into lines and parses each as it arrives. `push` hands every complete
 * line's value to `line`, in order, and returns false as soon as a line breaks a bound or is not
 * JSON, or `line` returns false; nothing after that is read (the reader stays failed), and
 * `refused` hears it once. `push` is bound, so a tier hands it its stream's bytes directly: a
 * line goes from the bytes to `line` with nothing in between.
 */
export class JsonLines {
  /** The bounds from now on (a line in progress is held to them too). */
  limits: JsonLinesLimits
  private _failed = false
  private _refusal: string | undefined
  /** Bytes of the line in progress read by earlier pushes. */
  private _bytes = 0
  /** In the chunk being read: where the line in progress starts (negative: an earlier chunk). */
  private _lineStart = 0
  private _expect = Expect.Value
  private _stack: Open[] = []
  private _root: unknown = undefined
  /** A number or literal split between pushes: its bytes so far. */
  private _partial: Buffer[] = []
  /** A string split between pushes: its text so far, decoded piece by piece. */
  private _partialString: StringPieces | undefined
  private _partialKind: 'string' | 'scalar' | undefined
  private _partialBytes = 0
  /** A split string's bytes so far end inside an escape. */
  private _partialEscaped = false
  /** Inside a bounded value: the line offset it may not pass, and the depth it opened at. */
  private _boundEnd = Infinity
  private _boundDepth = -1
  private _boundStart = 0
  /** The bounded value open now, as the refusal of too many keys names it. */
  private _boundField = ''
  /** Values the bounded value open now holds so far, itself included. */
  private _boundValues = 0
  /** Keys of the line's program data so far. */
  private _dataKeys = 0
  /** Values of the line's program data so far. */
  private _dataValues = 0
  /** The line offset the scalar token being read may not pass (its place's bound), and why. */
  private _tokenLast = Infinity
  private _tokenWhy: string | undefined

  constructor(
    limits: JsonLinesLimits,
    private readonly _line: (value: unknown) => boolean,
    private readonly _refused?: () => void,
  ) {
    this.limits = limits
  }

  /**
   * Why the stream was refused, when the bound it broke says (an element past `maxElements`, a
   * key past `maxKeys`), for the run's failure; `undefined` while it reads, and for a refusal of
   * any other bound.
   */
  get refusal(): string | undefined {
    return this._refusal
  }

  /** Reads `chunk`; false once the stream is refused (see the class). */
  readonly push = (chunk: Buffer): boolean => {
    if (this._failed) return false
    this._lineStart = -this._bytes
    const ok = this._read(chunk, this._line)
    if (ok) {
      this._bytes = chunk.length - this._lineStart
      return true
    }
    this._fail()
    this._refused?.()
    return false
  }

  private _fail(): void {
    this._failed = true
    this._stack = []
    this._partial = []
    // A string refused part way holds its pieces so far: the reader lives as long as its channel.
    this._partialString = undefined
    this._root = undefined
  }

  private _read(chunk: Buffer, line: (value: unknown) => boolean): boolean {
    const length = chunk.length
    let at = 0
    if (this._partialKind !== undefined) {
      at = this._continueToken(chunk)
      if (at < 0) return at === -1
    }
    while (at < length) {
      const byte = chunk[at]!
      if (byte === 0x20 || byte === 0x09 || byte === 0x0d) {
        at++
        continue
      }
      // The line's length so far, checked at each token: nothing is built past a bound.
      const offset = at - this._lineStart
      if (offset > this.limits.maxLineBytes) return false
      if (byte === NEWLINE) {
        if (this._expect !== Expect.End) return false
        const value = this._root
        this._lineStart = at + 1
        this._dataKeys = 0
        this._dataValues = 0
        this._expect = Expect.Value
        this._root = undefined
        if (!line(value)) return false
        at++
        continue
      }
      if (offset > this._boundEnd) return false
      switch (this._expect) {
        case Expect.Value:
        case Expect.ValueOrClose:
          if (byte === 0x5d && this._expect === Expect.ValueOrClose) {
            at = this._close(at, true)
          } else if (this._full()) {
            return false
          } else if (byte === 0x7b || byte === 0x5b) {
            if (!this._open(byte === 0x5b, offset)) return false
            at++
          } else if (this._boundDepth >= 0 && !this._value()) {
            return false
          } else {
            this._boundScalar(offset)
            at = this._scalarStart(chunk, at)
          }
          break
        case Expect.KeyOrClose:
        case Expect.Key:
          if (byte === 0x7d && this._expect === Expect.KeyOrClose) at = this._close(at, false)
          else if (this._fullObject()) return false
          else if (byte === QUOTE) {
            this._tokenLast = Infinity
            at = this._stringStart(chunk, at)
          } else return false
          break
        case Expect.Colon:
          if (byte !== 0x3a) return false
          this._expect = Expect.Value
          at++
          break
        case Expect.CommaOrClose: {
          const top = this._stack[this._stack.length - 1]!
          if (byte === 0x2c) {
            this._expect = top.isArray ? Expect.Value : Expect.Key
            at++
          } else if (byte === (top.isArray ? 0x5d : 0x7d)) {
            at = this._close(at, top.isArray)
          } else {
            return false
          }
          break
        }
        case Expect.End:
          return false
      }
      if (at < 0) return at === -1
    }
    return length - this._lineStart <= this.limits.maxLineBytes
  }

  private _open(isArray: boolean, offset: number): boolean {
    const stack = this._stack
    if (stack.length >= this.limits.maxDepth) return false
    let shape: JsonShape | undefined
    if (this._boundDepth < 0) {
      const parent = stack[stack.length - 1]
      shape = parent === undefined ? this.limits.shape : placeIn(parent)
      if (shape === undefined || (shape.kinds !== 'any' && shape.kinds !== (isArray ? 'array' : 'object'))) return false
      if (shape.bytes !== Infinity) {
        this._boundEnd = offset + shape.bytes
        this._boundDepth = stack.length
        this._boundStart = offset
        this._boundField = shape.field ?? 'a value'
        this._boundValues = 0
        shape = undefined
      }
    }
    if (this._boundDepth >= 0 && !this._value()) return false
    stack.push({ value: isArray ? [] : {}, isArray, key: undefined, keys: 0, shape })
    this._expect = isArray ? Expect.ValueOrClose : Expect.KeyOrClose
    return true
  }

  /**
   * Whether the top container is a list that holds as many elements as its place allows, so the
   * value starting now is refused at its first byte (`refusal` then says why).
   */
  private _full(): boolean {
    const top = this._stack[this._stack.length - 1]
    const max = top?.shape?.maxElements
    if (max === undefined || !top!.isArray || (top!.value as unknown[]).length < max.count) return false
    this._refusal = max.why
    return true
  }

  /**
   * Whether the top container is an object that holds as many keys as its place allows, so the
   * key starting now is refused at its first byte (`refusal` then says why).
   */
  private _fullObject(): boolean {
    const top = this._stack[this._stack.length - 1]!
    if (this._boundDepth >= 0) return this._fullData(top)
    const max = top.shape?.maxKeys
    if (max === undefined || top.keys < max.count) return false
    this._refusal = max.why
    return true
  }

  /** Whether the key starting now in `top`, an object of program data, is past `dataKeys`. */
  private _fullData(top: Open): boolean {
    const bounds = this.limits.dataKeys
    if (bounds === undefined) return false
    const perObject = top.keys >= bounds.perObject
    if (!perObject && this._dataKeys < bounds.perLine) return false
    this._refusal = bounds.why(this._boundField, perObject ? 'object' : 'keys')
    return true
  }

  /**
   * Counts the value of program data starting now, at its first byte: false, before any of it is
   * built, when it is past `dataKeys`' values (`refusal` then says why).
   */
  private _value(): boolean {
    const bounds = this.limits.dataKeys
    if (bounds !== undefined && this._dataValues >= bounds.valuesPerLine) {
      this._refusal = bounds.why(this._boundField, 'values')
      return false
    }
    this._boundValues++
    this._dataValues++
    return true
  }

  /**
   * Bounds the scalar starting at line offset `offset` by its place: the place's `string` bound,
   * or else a bounded place's bytes (a string given directly as arguments or a completion).
   */
  private _boundScalar(offset: number): void {
    this._tokenLast = Infinity
    if (this._boundDepth >= 0) return
    const parent = this._stack[this._stack.length - 1]
    const place = parent === undefined ? this.limits.shape : placeIn(parent)
    if (place === undefined) return
    if (place.string !== undefined) {
      this._tokenLast = offset + place.string.bytes - 1
      this._tokenWhy = place.string.why
    } else if (place.bytes !== Infinity) {
      this._tokenLast = offset + place.bytes - 1
      this._tokenWhy = `"${place.field ?? 'a value'}" is a string of more than ${place.bytes} bytes, more than its budget`
    }
  }

  /** Where in `chunk` a string token must have ended: past it, a bound is broken. */
  private _stop(chunk: Buffer): number {
    const last = Math.min(this._tokenLast, this._boundEnd, this.limits.maxLineBytes)
    return Math.min(chunk.length, this._lineStart + last + 1)
  }

  /** A string token passed its bound before it ended: -2, with the token's reason when its own bound was the one. */
  private _overString(): number {
    if (this._tokenLast <= Math.min(this._boundEnd, this.limits.maxLineBytes)) this._refusal = this._tokenWhy
    return -2
  }

  /** Closes the top container, whose closing byte is at `at`; the index after it. */
  private _close(at: number, isArray: boolean): number {
    const open = this._stack.pop()!
    if (open.isArray !== isArray) return -2
    const value = isArray ? fitted(open.value as unknown[]) : open.value
    if (this._boundDepth === this._stack.length) {
      this._boundDepth = -1
      this._boundEnd = Infinity
      ARRIVED_BYTES.set(value, at + 1 - this._lineStart - this._boundStart)
      ARRIVED_VALUES.set(value, this._boundValues)
    }
    return this._place(value) ? at + 1 : -2
  }

  /** Puts a complete value where it goes; false when it repeats a key. */
  private _place(value: unknown): boolean {
    const top = this._stack[this._stack.length - 1]
    if (top === undefined) {
      this._root = value
      this._expect = Expect.End
      return true
    }
    this._expect = Expect.CommaOrClose
    if (top.isArray) {
      ;(top.value as unknown[]).push(value)
      return true
    }
    const key = top.key!
    top.key = undefined
    const record = top.value as Record<string, unknown>
    if (hasOwn(record, key)) return false
    // Assigning `__proto__` would set the prototype: it is defined as an own key like the rest.
    if (key === '__proto__') defineProperty(record, key, { value, writable: true, enumerable: true, configurable: true })
    else record[key] = value
    return true
  }

  // tokens --------------------------------------------------------------------------------
  // Each returns the index after the token, -1 when the token continues in the next chunk
  // (kept in `_partial`), or -2 when it is not JSON or breaks a bound.

  private _stringStart(chunk: Buffer, start: number): number {
    const stop = this._stop(chunk)
    const end = stringEnd(chunk, start + 1, false, stop)
    if (end === -2) return -2
    if (end === -1) return stop < chunk.length ? this._overString() : this._keep(chunk, start, 'string')
    return this._string(chunk, start, end + 1, scan.escapes) ? end + 1 : -2
  }

  private _scalarStart(chunk: Buffer, start: number): number {
    if (chunk[start] === QUOTE) return this._stringStart(chunk, start)
    const end = scalarEnd(chunk, start)
    if (end === -1) return this._keep(chunk, start, 'scalar')
    return this._scalar(chunk, start, end) ? end : -2
  }

  private _keep(chunk: Buffer, start: number, kind: 'string' | 'scalar'): number {
    if (chunk.length - this._lineStart > this.limits.maxLineBytes || chunk.length - this._lineStart > this._boundEnd) return -2
    if (kind === 'scalar' && chunk.length - start > MAX_NUMBER_CHARS) return -2
    this._partialKind = kind
    this._partialBytes = chunk.length - start
    if (kind === 'scalar') {
      this._partial = [Buffer.from(chunk.subarray(start))]
      return -1
    }
    this._partialEscaped = scan.escapedAtEnd
    this._partialString = new StringPieces()
    return this._partialString.add(chunk.subarray(start + 1)) ? -1 : -2
  }

  /** Continues a token split between pushes, from the chunk's start. */
  private _continueToken(chunk: Buffer): number {
    const kind = this._partialKind!
    const stop = kind === 'string' ? this._stop(chunk) : chunk.length
    let end = kind === 'string' ? stringEnd(chunk, 0, this._partialEscaped, stop) : scalarEnd(chunk, 0)
    if (end === -2) return -2
    if (end === -1 && stop < chunk.length) return this._overString()
    const taken = end === -1 ? chunk.length : kind === 'string' ? end + 1 : end
    this._partialBytes += taken
    if (taken - this._lineStart > this.limits.maxLineBytes || taken - this._lineStart > this._boundEnd) return -2
    if (kind === 'scalar' && this._partialBytes > MAX_NUMBER_CHARS) return -2
    if (kind === 'string') {
      const pieces = this._partialString!
      if (end === -1) {
        this._partialEscaped = scan.escapedAtEnd
        return pieces.add(chunk) ? -1 : -2
      }
      this._partialString = undefined
      this._partialKind = undefined
      const text = pieces.end(chunk.subarray(0, end))
      return text !== undefined && this._stringValue(text) ? taken : -2
    }
    if (end === -1) {
      this._partial.push(Buffer.from(chunk))
      return -1
    }
    this._partial.push(chunk.subarray(0, taken))
    const bytes = Buffer.concat(this._partial)
    this._partial = []
    this._partialKind = undefined
    return this._scalar(bytes, 0, bytes.length) ? taken : -2
  }

  /** The string token from `start` to `end`, quotes included: a key or a value. */
  private _string(bytes: Buffer, start: number, end: number, escapes: boolean): boolean {
    const text = stringValue(bytes, start, end, escapes)
    return text !== undefined && this._stringValue(text)
  }

  private _stringValue(text: string): boolean {
    if (this._expect === Expect.Key || this._expect === Expect.KeyOrClose) {
      const top = this._stack[this._stack.length - 1]!
      top.key = text
      // Counted as read, not as its value is placed: a key whose value is a container still
      // open counts against the bounds of the keys after it.
      top.keys++
      if (this._boundDepth >= 0) this._dataKeys++
      this._expect = Expect.Colon
      return true
    }
    return this._place(text)
  }

  /** The number or literal from `start` to `end`. */
  private _scalar(bytes: Buffer, start: number, end: number): boolean {
    const value = scalarValue(bytes, start, end)
    return value !== INVALID && this._place(value)
  }
}

/** The place in the shape of the value about to open inside `parent`, if it may hold a container. */
function placeIn(parent: Open): JsonShape | undefined {
  const shape = parent.shape!
  const key = parent.isArray ? String((parent.value as unknown[]).length) : parent.key!
  if (shape.children !== undefined && hasOwn(shape.children, key)) return shape.children[key]
  return parent.isArray ? shape.elements : undefined
}

const { hasOwn, defineProperty } = Object as unknown as {
  hasOwn: (target: object, key: string) => boolean
  defineProperty: typeof Object.defineProperty
}

// tokens: where a string or a scalar ends in a chunk, and the value it stands for, lossless JSON only.

/** The longest number a line may spell: `JSON.stringify` writes at most about 25 characters. */
/** Lists shorter than this are copied as they close (see `fitted`). */
const FITTED_LENGTH = 16

/**
 * `list` in memory of its own length: V8 gives a list grown by `push` room for 16 elements at
 * its first, so a list nested a million deep held 184 bytes a level (176 MB for a 2 MB argument),
 * and a copy holds 56. Longer lists waste at most half their room, as any list does.
 */
function fitted(list: unknown[]): unknown[] {
  return list.length > 0 && list.length < FITTED_LENGTH ? list.slice() : list
}

const MAX_NUMBER_CHARS = 64
const NUMBER = /^-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?$/
const BACKSLASH = 0x5c

/** What a token that is not lossless JSON decodes to. */
const INVALID: unique symbol = Symbol('invalid JSON token')

/** What the last `stringEnd` saw besides the end: an escape in the string, one open at the chunk's end. */
const scan = { escapes: false, escapedAtEnd: false }

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
 * The index of the quote that ends the string whose contents start at `from`, -1 when `stop`
 * (at most the chunk's end) comes first (`scan.escapedAtEnd` then says whether it ended inside an
 * escape), -2 at a byte a JSON string cannot hold raw: a control character (a newline inside a
 * string means the line ended in it). `escaped`: the first byte is escaped.
 */
function stringEnd(chunk: Buffer, from: number, escaped: boolean, stop: number): number {
  const length = stop
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
function scalarEnd(chunk: Buffer, from: number): number {
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
function stringValue(bytes: Buffer, start: number, end: number, escapes: boolean): string | undefined {
  if (!escapes) return utf8Slice(bytes, start + 1, end - 1)
  try {
    return JSON.parse(utf8Slice(bytes, start, end)) as string
  } catch {
    return undefined
  }
}

/** The number or literal from `start` to `end`, or `INVALID`. */
function scalarValue(bytes: Buffer, start: number, end: number): boolean | null | number | typeof INVALID {
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
