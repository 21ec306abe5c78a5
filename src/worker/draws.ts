/**
 * The program's clocks and randomness in a run that may pause durably (`pause: 'durable'`). A
 * durable resume replays the program from its start in a fresh environment, so what the program
 * read from `Date.now`, `new Date()` (and `Date()`), `Math.random` and `crypto.getRandomValues`
 * must read the same the second time. This module replaces those four in the program's realm:
 * each answers first with the values recorded by the run being replayed, in order, one list per
 * source, then live, recording what it answered; the worker reports the recorded values to the
 * host before each batch of binding calls (`DrawsMessage`), so the host holds every value drawn
 * before a held call when it seals a token. Everything is captured at module load.
 */
import { MAX_DRAWS, MAX_DRAW_BYTES, type DrawValues, type DrawsMessage } from '../protocol/messages.js'
import { blankList, finishContainer } from '../json/intrinsics.js'
import { ErrorOf, StringOf, Uint8ArrayOf, apply, dataProperty, defineProperty, getOwnPropertyDescriptor, getPrototypeOf, realmGlobal, uncurryThis } from './intrinsics.js'

const RealDate = Date
const DatePrototype = Date.prototype
const { now: dateNow, parse: dateParse, UTC: dateUTC } = Date
const dateToString = uncurryThis(Date.prototype.toString)
const MathObject = Math
const mathRandom = Math.random
const { construct } = Reflect
const realCrypto = (realmGlobal as { crypto?: { getRandomValues(array: unknown): unknown } }).crypto
const realGetRandomValues = realCrypto?.getRandomValues
const charCodeAt = uncurryThis(String.prototype.charCodeAt)
const TypedArrayPrototype = getPrototypeOf(Uint8Array.prototype) as object
const getter = (name: string) => uncurryThis((getOwnPropertyDescriptor(TypedArrayPrototype, name) as PropertyDescriptor).get as (this: unknown) => unknown)
const typedBuffer = getter('buffer') as (array: unknown) => ArrayBufferLike
const typedOffset = getter('byteOffset') as (array: unknown) => number
const typedLength = getter('byteLength') as (array: unknown) => number

const HEX = '0123456789abcdef'
const HEX_PAIRS: string[] = blankList() as string[]
for (let i = 0; i < 256; i++) HEX_PAIRS[i] = HEX[i >> 4]! + HEX[i & 15]!

function nibble(text: string, index: number): number {
  const code = charCodeAt(text, index)
  return code <= 57 ? code - 48 : code - 87
}

/** One durable run's draws: the values to replay first, and those recorded since the last report. */
export class Draws {
  private _clockAt = 0
  private _randomAt = 0
  private _bytesAt = 0
  private _clock = blankList() as number[]
  private _random = blankList() as number[]
  private _bytes = blankList() as string[]
  private _recorded = 0
  private _recordedBytes = 0
  private _overflow = false
  private _unreported = false

  constructor(
    private readonly _replay: DrawValues,
    private readonly _run: number,
  ) {}

  /** Replaces the four sources in the program's realm; a durable run's environment serves no other run. */
  install(): void {
    const draws = this
    function now(): number {
      return draws._nextClock()
    }
    function RecordedDate(this: unknown): unknown {
      // Date() called without new ignores its arguments and answers the current time as text.
      if (new.target === undefined) return dateToString(new RealDate(draws._nextClock()))
      if (arguments.length === 0) return construct(RealDate, [draws._nextClock()], new.target)
      return construct(RealDate, arguments, new.target)
    }
    defineProperty(RecordedDate, 'prototype', dataProperty(DatePrototype, false, false, false))
    defineProperty(RecordedDate, 'name', dataProperty('Date', false, false, true))
    defineProperty(RecordedDate, 'length', dataProperty(7, false, false, true))
    defineProperty(RecordedDate, 'now', dataProperty(now, false, true, true))
    defineProperty(RecordedDate, 'parse', dataProperty(dateParse, false, true, true))
    defineProperty(RecordedDate, 'UTC', dataProperty(dateUTC, false, true, true))
    defineProperty(DatePrototype, 'constructor', dataProperty(RecordedDate, false, true, true))
    defineProperty(realmGlobal, 'Date', dataProperty(RecordedDate, false, true, true))
    function random(): number {
      return draws._nextRandom()
    }
    defineProperty(MathObject, 'random', dataProperty(random, false, true, true))
    if (realCrypto && realGetRandomValues) {
      function getRandomValues<T extends ArrayBufferView | null>(array: T): T {
        // The built-in first: it checks the array (an integer typed array of at most 65536 bytes) and fills it.
        apply(realGetRandomValues!, realCrypto, [array])
        const length = typedLength(array)
        draws._randomBytes(new Uint8ArrayOf(typedBuffer(array), typedOffset(array), length), length)
        return array
      }
      defineProperty(realCrypto, 'getRandomValues', dataProperty(getRandomValues, false, true, true))
    }
  }

  /** The values recorded since the last report, or undefined when there are none. */
  take(): DrawsMessage | undefined {
    if (!this._unreported) return undefined
    const clock = this._clock
    const random = this._random
    const bytes = this._bytes
    finishContainer(clock, true)
    finishContainer(random, true)
    finishContainer(bytes, true)
    this._clock = blankList() as number[]
    this._random = blankList() as number[]
    this._bytes = blankList() as string[]
    this._unreported = false
    // Literals define their fields, so setters a program planted on Object.prototype never run.
    return this._overflow ? { type: 'draws', run: this._run, clock, random, bytes, overflow: true } : { type: 'draws', run: this._run, clock, random, bytes }
  }

  private _nextClock(): number {
    const replay = this._replay.clock
    if (this._clockAt < replay.length) return replay[this._clockAt++]!
    const value = dateNow()
    if (this._room(1, 0)) this._clock[this._clock.length] = value
    return value
  }

  private _nextRandom(): number {
    const replay = this._replay.random
    if (this._randomAt < replay.length) return replay[this._randomAt++]!
    const value = mathRandom()
    if (this._room(1, 0)) this._random[this._random.length] = value
    return value
  }

  private _randomBytes(view: Uint8Array, length: number): void {
    const replay = this._replay.bytes
    if (this._bytesAt < replay.length) {
      const recorded = replay[this._bytesAt++]!
      if (recorded.length !== length * 2) {
        throw new ErrorOf(`durable replay diverged: crypto.getRandomValues was asked for ${StringOf(length)} bytes where the recorded run asked for ${StringOf(recorded.length / 2)}`)
      }
      for (let i = 0; i < length; i++) view[i] = nibble(recorded, 2 * i) * 16 + nibble(recorded, 2 * i + 1)
      return
    }
    if (!this._room(1, length)) return
    let text = ''
    for (let i = 0; i < length; i++) text += HEX_PAIRS[view[i]!]!
    this._bytes[this._bytes.length] = text
  }

  /** Whether one more value of `bytes` bytes may be recorded; past the caps, the run cannot pause durably. */
  private _room(values: number, bytes: number): boolean {
    this._unreported = true
    if (this._overflow) return false
    if (this._recorded + values > MAX_DRAWS || this._recordedBytes + bytes > MAX_DRAW_BYTES) {
      this._overflow = true
      return false
    }
    this._recorded += values
    this._recordedBytes += bytes
    return true
  }
}
