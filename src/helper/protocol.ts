/**
 * The channel between the host and a helper process: one frame per line of JSON on the
 * helper's file descriptor 3 (a socket pair both ends can read and write). The types and the
 * framing are shared by both sides; `parseHelperFrame` is the host's check of what it reads.
 *
 * Not Node's built-in `ipc` channel: the program shares the helper's descriptors, and a few
 * malformed bytes written to an `ipc` descriptor throw inside the host's channel reader as an
 * uncaught exception, killing the host (measured on Node 20 with both `json` and `advanced`
 * serialization). Here every frame is parsed inside a try/catch and a bad one is a protocol
 * violation of the run, nothing more.
 */
import type { ThreadEnvironmentOptions } from '../host/thread.js'
import { isRecord } from '../json/index.js'
import type { HostMessage } from '../protocol.js'

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

/** Start-up options, passed as the helper's only argument (JSON): those of its worker. */
export type HelperOptions = ThreadEnvironmentOptions

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

/** One frame as written on the channel. `JSON.stringify` escapes every newline inside strings. */
export function encodeFrame(frame: HostFrame | HelperFrame): string {
  return `${JSON.stringify(frame)}\n`
}

/** The frame `raw` (a JSON.parse result) stands for, or `undefined` when it is not one. */
export function parseHelperFrame(raw: unknown): HelperFrame | undefined {
  if (!isRecord(raw)) return undefined
  const frame = raw
  switch (frame.type) {
    case 'ready':
      return typeof frame.cwd === 'string' ? { type: 'ready', cwd: frame.cwd } : undefined
    case 'forged':
      return { type: frame.type }
    case 'message':
      return 'message' in frame ? { type: 'message', message: frame.message } : undefined
    case 'refused':
    case 'exit':
      return typeof frame.message === 'string' ? { type: frame.type, message: frame.message } : undefined
    default:
      return undefined
  }
}

/** The capacity an unfinished line's buffer starts at, and keeps between long lines. */
const SMALL_BUFFER_BYTES = 64 * 1024

/**
 * Splits a byte stream into frames. A line longer than `maxFrameBytes` is over-budget traffic:
 * `push` reports failure as soon as the buffered bytes pass it, before anything is parsed. An
 * unfinished line is kept in one buffer that grows by doubling, so the reader holds at most
 * about twice `maxFrameBytes` however the bytes trickle in (one Buffer per read would cost a
 * couple of hundred bytes of bookkeeping for every byte sent one at a time). The limit may
 * change between pushes.
 */
export class FrameReader {
  private _pending = Buffer.alloc(0)
  private _length = 0

  constructor(public maxFrameBytes: number) {}

  /** Complete lines in `chunk` (parsed), or `undefined` when a line is too long or not JSON. */
  push(chunk: Buffer): unknown[] | undefined {
    const frames: unknown[] = []
    let start = 0
    for (let end = chunk.indexOf(10); end !== -1; end = chunk.indexOf(10, start)) {
      if (this._length + end - start > this.maxFrameBytes) return undefined
      let line = chunk.subarray(start, end)
      if (this._length > 0) {
        this._append(line)
        line = this._pending.subarray(0, this._length)
        this._length = 0
      }
      start = end + 1
      try {
        frames.push(JSON.parse(line.toString('utf8')))
      } catch {
        return undefined
      }
      // A long line's buffer is not kept for the short ones that follow.
      if (this._pending.length > SMALL_BUFFER_BYTES) this._pending = Buffer.alloc(0)
    }
    if (start < chunk.length) {
      if (this._length + chunk.length - start > this.maxFrameBytes) return undefined
      this._append(chunk.subarray(start))
    }
    return frames
  }

  private _append(bytes: Buffer): void {
    const needed = this._length + bytes.length
    if (needed > this._pending.length) {
      const grown = Buffer.allocUnsafe(Math.max(needed, 2 * this._pending.length, SMALL_BUFFER_BYTES))
      this._pending.copy(grown, 0, 0, this._length)
      this._pending = grown
    }
    bytes.copy(this._pending, this._length)
    this._length = needed
  }
}
