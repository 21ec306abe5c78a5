/**
 * The frames of a helper process's channels, for all three parties: the host
 * (src/host/environments/process/environment.ts), the helper's main thread (src/helper/main.ts) and its worker
 * (src/worker/channel.ts, inbox.ts). One frame is one line of JSON; this module owns their
 * shapes, their encoding, the reader that splits a byte stream into them, and the checks of
 * what a reader hands back.
 *
 * The channel is the helper's file descriptor 3 (a socket pair both ends can read and write);
 * the worker has a descriptor of its own for host frames (`INBOX_FD`). Not Node's built-in `ipc`
 * channel: the program shares the helper's descriptors, and a few malformed bytes written to an
 * `ipc` descriptor throw inside the host's channel reader as an uncaught exception, killing the
 * host (measured on Node 20 with both `json` and `advanced` serialization). Here every frame is
 * parsed inside a try/catch and a bad one is a protocol violation of the run, nothing more.
 *
 * Everything a helper sends is untrusted (the program can write frames of its own to the
 * descriptor): the host checks each frame (src/host/connection/connection.ts). This module also runs in the
 * worker, in the program's realm, so it follows the hostile-realm rule (src/intrinsics.ts): the
 * worker's encoder must not meet a planted `toJSON`, and the reader calls only what it captured.
 */
import type { HostMessage, ProgramCode, PythonSnapshot, WorkerMessage } from './messages.js'
import { uncurryThis } from '../intrinsics.js'
import { getOwnPropertyDescriptor, getPrototypeOf, isArray, stringify } from '../json/intrinsics.js'
import { jsonText } from '../json/text.js'
import { isRecord } from '../json/record.js'

// descriptors ------------------------------------------------------------------------------

/** The helper's descriptor for the channel. */
export const CHANNEL_FD = 3
/**
 * The worker's own descriptor for host messages (a second socket pair): a kept environment's
 * runs in the cwd the helper is in, and binding replies, reach the worker without waking the
 * helper's main thread (src/worker/inbox.ts). Frames have the channel's `relay` form.
 */
export const INBOX_FD = 5
/** Where a wrapper reads its `input` (bubblewrap's seccomp filter); closed before the helper runs. */
export const WRAPPER_INPUT_FD = 4
/**
 * The startup snapshot a process tier's helper restores (src/host/environments/process/helper-snapshot.ts):
 * an unnamed file, read by Node through `/proc/self/fd/6` as the process starts, and closed by
 * the environment (src/worker/snapshot.ts) before any program runs.
 */
export const SNAPSHOT_FD = 6
/** Python's interpreter snapshot (src/python/snapshot.ts), when the host has built it: see PythonSnapshot. */
export const PYTHON_SNAPSHOT_FD = 7

/** Start-up options, passed as the helper's only argument (JSON): those of its worker. */
export interface HelperOptions {
  maxOldGenerationSizeMb: number
  /** A lowered program the worker runs privately before it reports ready, to warm its code. */
  rehearsal?: ProgramCode
  /** The marker every subprocess inherits, chosen by the host. */
  subprocessMarker: string
  /** Python's snapshot, given as PYTHON_SNAPSHOT_FD, when the host had built it as the helper started. */
  pythonSnapshot?: PythonSnapshot
}

// shapes -----------------------------------------------------------------------------------

/**
 * Host -> helper, on the channel (its main thread) or the worker's inbox. A `run` relayed by the
 * main thread first moves the helper to the run's cwd.
 */
export type HostFrame = { type: 'relay'; message: HostMessage }

/** Helper -> host. Untrusted: the program can write frames of its own to the descriptor. */
export type HelperFrame =
  /** The helper runs (under its confinement) and its worker has loaded. Always first. */
  | { type: 'ready'; cwd: string }
  /** A message the worker posted on its private port, relayed unchanged. */
  | { type: 'message'; message: unknown }
  /** Forged traffic seen inside the helper (parentPort, a foreign subprocess report...). */
  | { type: 'forged' }
  /** The run's cwd cannot be entered here, so its program was not started. */
  | { type: 'refused'; message: string }
  /** The worker exited; `message` says how, for the model. */
  | { type: 'exit'; message: string }

// the stream tier --------------------------------------------------------------------------

/**
 * On the stream and container tiers the host reaches a helper over one byte stream the deployer
 * supplies. At its far end the stream entry (src/helper/stream-entry.ts) starts the helper and
 * carries the helper's descriptors over the stream. Each line of the stream is a JSON array
 * whose first element names what it carries.
 */

/**
 * The version of everything that crosses the stream: these lines, the helper's frames and the
 * worker's messages. The entry announces it first (`hello`) and the host says its own in
 * `start`; either side refuses a peer of another version. Bump it with any change to them
 * (1 was the entry before the handshake, which announced nothing).
 */
export const STREAM_PROTOCOL_VERSION = 2

export interface StreamStart {
  /** The host's `STREAM_PROTOCOL_VERSION`: an entry of another version refuses to start. */
  protocol: number
  helper: HelperOptions
  /** The entry caps the helper's writable memory at what a fresh helper holds there plus this. */
  maxMemoryMb: number
  /** The longest helper frame the entry forwards; a longer one is forged traffic. */
  maxFrameBytes: number
  /**
   * What a fresh helper reserves (`dataBaseline`), as the host measured it for its own Node:
   * the entry takes it when it runs the same Node (`nodeBuild`) instead of measuring it again.
   */
  baseline: { node: string; kb: number }
}

/** Host -> entry. `start` comes first, once. */
export type HostLine =
  | ['start', StreamStart]
  /** To the helper's main thread (descriptor 3). */
  | ['channel', HostFrame]
  /** To the worker's inbox (descriptor 5). */
  | ['inbox', HostFrame]
  /** Kill what the program started, in the helper's tree or carrying its marker; answered by `swept`. */
  | ['sweep']
  /** Answered by `busy`: the CPU time of the helper's tree. */
  | ['busy']

/** Entry -> host. Untrusted: the entry shares its machine with the program. */
export type EntryLine =
  /** The entry's first line, before it reads anything: its `STREAM_PROTOCOL_VERSION`. */
  | ['hello', number]
  /** A frame the helper wrote to its channel, as written (checked by the host's connection). */
  | ['channel', unknown]
  /** Text the helper's process wrote to its stdout or stderr. */
  | ['output', string]
  /** Bytes on the worker's inbox, or a channel line longer than `maxFrameBytes`. */
  | ['forged']
  | ['swept', boolean]
  | ['busy', number]
  /** The helper exited: how, and whether the kernel's OOM killer ended something there. */
  | ['ended', string, boolean]

/** One line of the stream tier's byte stream. */
export function encodeLine(line: HostLine | EntryLine): string {
  return `${stringify(line)}\n`
}

const { MAX_SAFE_INTEGER } = Number

/** The entry line `raw` (a parsed line from the stream) stands for, or `undefined` when it is not one. */
export function parseEntryLine(raw: unknown): EntryLine | undefined {
  if (!isArray(raw)) return undefined
  const tag: unknown = raw[0]
  const first: unknown = raw[1]
  const second: unknown = raw[2]
  // Exactly the elements each line has: padding would make the host parse bulk nobody reads.
  const length = raw.length
  switch (tag) {
    case 'hello':
      return length === 2 && typeof first === 'number' && first >= 0 && first <= MAX_SAFE_INTEGER && first % 1 === 0 ? ['hello', first] : undefined
    case 'channel':
      return length === 2 ? ['channel', first] : undefined
    case 'output':
      return length === 2 && typeof first === 'string' ? ['output', first] : undefined
    case 'forged':
      return length === 1 ? ['forged'] : undefined
    case 'swept':
      return length === 2 && typeof first === 'boolean' ? ['swept', first] : undefined
    case 'busy':
      return length === 2 && typeof first === 'number' && first >= 0 && first <= MAX_SAFE_INTEGER ? ['busy', first] : undefined
    case 'ended':
      return length === 3 && typeof first === 'string' && typeof second === 'boolean' ? ['ended', first, second] : undefined
    default:
      return undefined
  }
}

// encoding ---------------------------------------------------------------------------------

/**
 * One frame as the host or the helper's main thread writes it. `JSON.stringify` escapes every
 * newline inside strings. Not for the worker: see `messageFrame`.
 */
export function encodeFrame(frame: HostFrame | HelperFrame): string {
  return `${stringify(frame)}\n`
}

/** The frame that tells the host its traffic was tampered with. */
export const FORGED_FRAME = '{"type":"forged"}\n'

/**
 * The `message` frame carrying `message`, as the worker writes it. The worker shares its realm
 * with the program, so the encoding must not meet anything a program planted (`JSON.stringify`
 * calls a `toJSON` it finds on a value's prototype chain), and a call's arguments or a
 * completion may nest deeper than `JSON.stringify` recurses: `jsonText` writes it (corpus 167).
 */
export function messageFrame(message: WorkerMessage): string {
  return `{"type":"message","message":${jsonText(message)}}\n`
}

// checks -----------------------------------------------------------------------------------

/**
 * The host frame `raw` (a parsed line from the host) stands for, or `undefined` when it is not
 * one: the program can read from the helper's descriptors too, and tear a frame. Its message is
 * the host's and is not checked further.
 */
export function parseHostFrame(raw: unknown): HostFrame | undefined {
  return isRecord(raw) && raw.type === 'relay' ? (raw as HostFrame) : undefined
}

// reading ----------------------------------------------------------------------------------

// Only what no program can redirect: `subarray` and `Buffer.concat` construct through a
// `constructor` and `Symbol.species` a program may plant, `toString` calls a replaceable
// `utf8Slice`, and a typed array's `buffer`, `byteOffset` and `length` are getters a program may
// replace. Node's own `indexOf` and `utf8Slice`, the typed-array `set`, and views made with the
// captured constructor construct nothing a program can reach.
const parse = JSON.parse
const max = Math.max
const allocUnsafe = Buffer.allocUnsafe
const Uint8ArrayOf = Uint8Array
const indexOf = uncurryThis(Buffer.prototype.indexOf as (this: Uint8Array, value: number, byteOffset: number) => number)
const setBytes = uncurryThis(Uint8Array.prototype.set as (this: Uint8Array, source: Uint8Array, offset: number) => void)
const utf8Slice = uncurryThis((Buffer.prototype as unknown as { utf8Slice: (this: Uint8Array, start: number, end: number) => string }).utf8Slice)
const TypedArrayPrototype = getPrototypeOf(Uint8Array.prototype) as object
const getter = (name: string) => uncurryThis(getOwnPropertyDescriptor(TypedArrayPrototype, name)!.get as (this: Uint8Array) => number)
const lengthOf = getter('length')
const byteOffsetOf = getter('byteOffset')
const bufferOf = uncurryThis(getOwnPropertyDescriptor(TypedArrayPrototype, 'buffer')!.get as (this: Uint8Array) => ArrayBufferLike)

/** The bytes of `bytes` from `start` to `end`, as a view made with the captured constructor. */
function view(bytes: Uint8Array, start: number, end: number): Uint8Array {
  return new Uint8ArrayOf(bufferOf(bytes), byteOffsetOf(bytes) + start, end - start)
}

const NEWLINE = 10
/** The capacity an unfinished line's buffer starts at, and keeps between long lines. */
const SMALL_BUFFER_BYTES = 64 * 1024

/**
 * Splits a byte stream into frames. A line longer than `maxFrameBytes` is over-budget traffic:
 * the reader reports failure as soon as the buffered bytes pass it, before anything is parsed.
 * An unfinished line is kept in one buffer that grows by doubling, so the reader holds at most
 * about twice `maxFrameBytes` however the bytes trickle in (one Buffer per read would cost a
 * couple of hundred bytes of bookkeeping for every byte sent one at a time). The limit may
 * change between reads.
 */
export class FrameReader {
  private _pending: Uint8Array = new Uint8ArrayOf(0)
  private _capacity = 0
  private _length = 0

  constructor(public maxFrameBytes: number) {}

  /**
   * The complete lines in `chunk`, parsed, or `undefined` when a line is too long or not JSON
   * (then none of the chunk's frames is returned). For the host and the helper's main thread.
   */
  push(chunk: Uint8Array): unknown[] | undefined {
    const frames: unknown[] = []
    const whole = this.read(chunk, lengthOf(chunk), (frame) => {
      frames[frames.length] = frame
      return true
    })
    return whole ? frames : undefined
  }

  /**
   * Hands each complete line in the first `length` bytes of `chunk` to `frame`, parsed, in
   * order, while `frame` returns true. False as soon as a line is too long or not JSON, or
   * `frame` refuses one: the frames before it were handed on, and nothing after it is read.
   */
  read(chunk: Uint8Array, length: number, frame: (raw: unknown) => boolean): boolean {
    return this.readLines(chunk, length, (text) => {
      let raw: unknown
      try {
        raw = parse(text)
      } catch {
        return false
      }
      return frame(raw)
    })
  }

  /** As `read`, but hands on each line's text unparsed (the stream entry forwards lines as they are). */
  readLines(chunk: Uint8Array, length: number, line: (text: string) => boolean): boolean {
    let start = 0
    for (let end = indexOf(chunk, NEWLINE, 0); end !== -1 && end < length; end = indexOf(chunk, NEWLINE, start)) {
      if (this._length + end - start > this.maxFrameBytes) return false
      let text: string
      if (this._length > 0) {
        this._append(chunk, start, end)
        text = utf8Slice(this._pending, 0, this._length)
        this._length = 0
      } else {
        text = utf8Slice(chunk, start, end)
      }
      start = end + 1
      // A long line's buffer is not kept for the short ones that follow.
      if (this._capacity > SMALL_BUFFER_BYTES) {
        this._pending = new Uint8ArrayOf(0)
        this._capacity = 0
      }
      if (!line(text)) return false
    }
    if (start < length) {
      if (this._length + length - start > this.maxFrameBytes) return false
      this._append(chunk, start, length)
    }
    return true
  }

  private _append(chunk: Uint8Array, start: number, end: number): void {
    const needed = this._length + end - start
    if (needed > this._capacity) {
      const capacity = max(needed, 2 * this._capacity, SMALL_BUFFER_BYTES)
      const grown = allocUnsafe(capacity)
      if (this._length > 0) setBytes(grown, view(this._pending, 0, this._length), 0)
      this._pending = grown
      this._capacity = capacity
    }
    setBytes(this._pending, view(chunk, start, end), this._length)
    this._length = needed
  }
}
