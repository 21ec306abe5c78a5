/**
 * The channel between the host and a helper process, imported by both sides: one frame per
 * line of JSON on the helper's file descriptor 3 (a socket pair both ends can read and write).
 *
 * Not Node's built-in `ipc` channel: the program shares the helper's descriptors, and a few
 * malformed bytes written to an `ipc` descriptor throw inside the host's channel reader as an
 * uncaught exception, killing the host (measured on Node 20 with both `json` and `advanced`
 * serialization). Here every frame is parsed inside a try/catch and a bad one is a protocol
 * violation of the run, nothing more.
 */
import type { EnvironmentOptions } from '../host/environment.js'
import type { HostMessage } from '../protocol.js'

/** The helper's descriptor for the channel. */
export const CHANNEL_FD = 3

/**
 * Start-up options, passed as the helper's only argument (JSON): those the host would give its
 * environment in-process.
 */
export type HelperOptions = EnvironmentOptions

/** Host -> helper. */
export type HostFrame =
  | { type: 'relay'; message: HostMessage }
  /**
   * Kill the subprocesses the program started (the run has settled); answered by `killed`.
   * `sweep` (only for a helper in a PID namespace of its own) also kills every other process
   * there and answers whether none is left; `thorough` is `Environment.killSubprocesses`'s.
   */
  | { type: 'kill-subprocesses'; id: number; sweep?: boolean; thorough?: boolean }

/** Helper -> host. Untrusted: the program can write frames of its own to the descriptor. */
export type HelperFrame =
  /** The helper runs (under its confinement) and its worker is starting. Always first. */
  | { type: 'ready' }
  /** A message the worker posted on its private port, relayed unchanged. */
  | { type: 'message'; message: unknown }
  /** Forged traffic seen inside the helper (parentPort, a foreign subprocess report...). */
  | { type: 'forged' }
  /** Text that reached the worker's real stdout/stderr. */
  | { type: 'raw'; text: string }
  /** The subprocesses of request `id` are dead; `alone` (after a sweep): nothing else is left. */
  | { type: 'killed'; id: number; alone?: boolean }
  /** The worker exited; `errorCode`/`errorMessage` describe the error that ended it, if any. */
  | { type: 'exit'; code: number; errorCode?: string; errorMessage?: string }

/** One frame as written on the channel. `JSON.stringify` escapes every newline inside strings. */
export function encodeFrame(frame: HostFrame | HelperFrame): string {
  return `${JSON.stringify(frame)}\n`
}

/**
 * Splits a byte stream into frames. A line longer than `maxFrameBytes` is over-budget traffic:
 * `push` then reports failure rather than buffering without bound.
 */
export class FrameReader {
  private _parts: Buffer[] = []
  private _buffered = 0

  constructor(private readonly _maxFrameBytes: number) {}

  /** Complete lines in `chunk` (parsed), or `undefined` when a line is too long or not JSON. */
  push(chunk: Buffer): unknown[] | undefined {
    const frames: unknown[] = []
    let start = 0
    for (let end = chunk.indexOf(10); end !== -1; end = chunk.indexOf(10, start)) {
      const line = Buffer.concat([...this._parts, chunk.subarray(start, end)])
      this._parts = []
      this._buffered = 0
      start = end + 1
      if (line.length > this._maxFrameBytes) return undefined
      try {
        frames.push(JSON.parse(line.toString('utf8')))
      } catch {
        return undefined
      }
    }
    if (start < chunk.length) {
      this._parts.push(chunk.subarray(start))
      this._buffered += chunk.length - start
      if (this._buffered > this._maxFrameBytes) return undefined
    }
    return frames
  }
}
