/**
 * Frames written straight to a helper's channel (descriptor 3). In a helper process the worker
 * writes each of its messages to the host itself instead of posting it to the helper's main
 * thread: a result then reaches the host without waking that thread, serializing the message
 * twice and relaying it (on an idle machine, a thread's wake-up alone costs a tenth of a
 * millisecond or more). The frames are encoded by src/protocol/frames.ts (`messageFrame`, `FORGED_FRAME`).
 *
 * Both threads of the helper write to the one socket (the main thread writes `ready`, `exit`,
 * `refused` and `forged`), so each holds `lock` for a whole frame: the socket is non-blocking,
 * and a frame larger than its buffer goes out in pieces that another writer must not split.
 */
import fs from 'node:fs'
import { atomic, blockThread, uncurryThis } from './intrinsics.js'

const now = Date.now
const writeSync = fs.writeSync
const byteLength = Buffer.byteLength
const bufferAllocUnsafe = Buffer.allocUnsafe
// Not `Buffer.from` or `subarray`: they reach a `utf8Write`, `constructor` or `Symbol.species`
// a program may replace.
const utf8Write = uncurryThis((Buffer.prototype as unknown as { utf8Write: (text: string, offset: number, length: number) => number }).utf8Write) as (
  bytes: Buffer, text: string, offset: number, length: number,
) => number
const Int32ArrayOf = Int32Array

/** A lock both threads of a helper hold while they write a frame: one shared 32-bit cell. */
export function createFrameLock(): Int32Array {
  return new Int32ArrayOf(new atomic.SharedArrayBuffer(4))
}

/**
 * Writes `text` to `fd` whole, holding `lock`. Waits up to `lockWaitMs` for the lock (a worker
 * that died holding it never lets go) and, while the peer's buffer is full, for room.
 */
export function writeFrame(fd: number, lock: Int32Array, text: string, lockWaitMs = Infinity): void {
  const locked = acquire(lock, lockWaitMs)
  try {
    writeAll(fd, text)
  } finally {
    if (locked) release(lock)
  }
}

function acquire(lock: Int32Array, waitMs: number): boolean {
  const deadline = waitMs === Infinity ? waitMs : now() + waitMs
  while (atomic.compareExchange(lock, 0, 0, 1) !== 0) {
    const left = deadline - now()
    if (left <= 0) return false
    atomic.wait(lock, 0, 1, left === Infinity ? 100 : left)
  }
  return true
}

function release(lock: Int32Array): void {
  atomic.store(lock, 0, 0)
  atomic.notify(lock, 0, 1)
}

function writeAll(fd: number, text: string): void {
  const total = byteLength(text)
  let written = retrying(() => writeSync(fd, text))
  if (written === total) return
  const bytes = bufferAllocUnsafe(total)
  utf8Write(bytes, text, 0, total)
  while (written < total) written += retrying(() => writeSync(fd, bytes, written, total - written))
}

/** A write into a full socket fails with EAGAIN: wait for the host to read, then try again. */
function retrying(write: () => number): number {
  for (;;) {
    try {
      return write()
    } catch (error) {
      if ((error as { code?: unknown }).code !== 'EAGAIN') throw error
      blockThread(1)
    }
  }
}
