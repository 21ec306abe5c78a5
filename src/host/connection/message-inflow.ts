/**
 * A thread worker's messages as the host reads them: JSON text posted on the worker's port
 * (src/worker/outbox.ts), read in order within the run's bounds (json-lines.ts). A long message
 * (a call's large arguments, a large completion) is read in slices, one per turn of the host's
 * event loop, so it never holds the loop for longer than a slice takes; messages posted after it
 * wait their turn. Anything on the port that is not text was posted by the program, and so was
 * a message refused by its bounds.
 */
import { type JsonLinesLimits, JsonLines } from './json-lines.js'

/** Bytes read per turn of the event loop (a few milliseconds of building values). */
const SLICE_BYTES = 256 * 1024

export class MessageInflow {
  private readonly _queue: unknown[] = []
  private _reading = false
  private _closed = false
  private _drained: Array<() => void> = []

  constructor(
    private readonly _limits: JsonLinesLimits,
    private readonly _deliver: (message: unknown) => void,
    /** A post that is not a message within the bounds; `why`, when the bound it broke says. */
    private readonly _refused: (why: string | undefined) => void,
  ) {}

  /** What arrived on the port, in order. */
  post(posted: unknown): void {
    if (this._closed) return
    this._queue.push(posted)
    if (!this._reading) this._drain()
  }

  /**
   * Reads nothing more: what is queued (a long message in slices too) and everything posted
   * later is dropped. The environment is ending, and a program that queued a flood behind a
   * forged message would otherwise hold the host reading it. Returns whether anything was dropped.
   */
  close(): boolean {
    this._closed = true
    const dropped = this._queue.length > 0 || this._reading
    this._queue.length = 0
    return dropped
  }

  /** Calls `then` once everything posted so far has been read and delivered. */
  afterwards(then: () => void): void {
    if (this._reading) this._drained.push(then)
    else then()
  }

  private _drain(): void {
    while (this._queue.length > 0) {
      const posted = this._queue.shift()
      if (typeof posted !== 'string') {
        this._refused(undefined)
      } else if (posted.length <= SLICE_BYTES / 3) {
        // At most three bytes per UTF-16 unit: short enough to read in one go.
        this._hand(readMessage(posted, this._limits))
      } else {
        this._reading = true
        return this._readInSlices(posted)
      }
    }
    this._reading = false
    const drained = this._drained
    this._drained = []
    for (const then of drained) then()
  }

  private _readInSlices(text: string): void {
    if (text.length > this._limits.maxLineBytes) return this._done({ refusal: undefined })
    const bytes = Buffer.from(text)
    let read: { value: unknown } | undefined
    const reader = new JsonLines(this._limits, (value) => read === undefined && ((read = { value }), true))
    let at = 0
    const slice = () => {
      if (this._closed) return this._drain()
      const end = Math.min(at + SLICE_BYTES, bytes.length)
      if (!reader.push(bytes.subarray(at, end))) return this._done({ refusal: reader.refusal })
      at = end
      if (at < bytes.length) return void setImmediate(slice)
      this._done(reader.push(LINE_END) ? read! : { refusal: reader.refusal })
    }
    slice()
  }

  private _done(read: ReadMessage): void {
    this._hand(read)
    this._drain()
  }

  private _hand(read: ReadMessage): void {
    if ('value' in read) this._deliver(read.value)
    else this._refused(read.refusal)
  }
}

const LINE_END = Buffer.from('\n')

/** A message's value in a box, or why it was refused (`JsonLines.refusal`). */
type ReadMessage = { value: unknown } | { refusal: string | undefined }

/**
 * A message posted as JSON text (a thread worker's), read with `limits` as one line: its value,
 * or a refusal when it is not exactly one JSON value within them.
 */
export function readMessage(text: string, limits: JsonLinesLimits): ReadMessage {
  // Past the bound in UTF-16 units, it is past it in bytes too: nothing is copied.
  if (text.length > limits.maxLineBytes) return { refusal: undefined }
  let read: { value: unknown } | undefined
  const reader = new JsonLines(limits, (value) => read === undefined && ((read = { value }), true))
  return reader.push(Buffer.from(text)) && reader.push(LINE_END) ? read! : { refusal: reader.refusal }
}
