/**
 * Frames written straight to a helper's channel (descriptor 3). In a helper process the worker
 * writes each of its messages to the host itself instead of posting it to the helper's main
 * thread: a result then reaches the host without waking that thread, serializing the message
 * twice and relaying it (on an idle machine, a thread's wake-up alone costs a tenth of a
 * millisecond or more).
 *
 * Both threads of the helper write to the one socket (the main thread writes `ready`, `exit`,
 * `refused` and `forged`), so each holds `lock` for a whole frame: the socket is non-blocking,
 * and a frame larger than its buffer goes out in pieces that another writer must not split.
 *
 * The worker shares its realm with the program, so the encoding must not meet anything a
 * program planted: `JSON.stringify` calls a `toJSON` it finds on a value's prototype chain.
 */
import fs from 'node:fs'
import type { WorkerMessage } from '../protocol.js'
import { ArrayPrototype, ObjectPrototype, blankList, blankRecord, hasOwn, stringify } from '../json/intrinsics.js'
import { blockThread, getPrototypeOf, isArray, ownKeys, uncurryThis } from './intrinsics.js'

const now = Date.now
const writeSync = fs.writeSync
const byteLength = Buffer.byteLength
const bufferAllocUnsafe = Buffer.allocUnsafe
// Not `Buffer.from` or `subarray`: they reach a `utf8Write`, `constructor` or `Symbol.species`
// a program may replace.
const utf8Write = uncurryThis((Buffer.prototype as unknown as { utf8Write: (text: string, offset: number, length: number) => number }).utf8Write) as (
  bytes: Buffer, text: string, offset: number, length: number,
) => number
const compareExchange = Atomics.compareExchange
const store = Atomics.store
const notify = Atomics.notify
const wait = Atomics.wait
const Int32ArrayOf = Int32Array
const SharedArrayBufferOf = SharedArrayBuffer

/** The frame that tells the host its traffic was tampered with. */
export const FORGED_FRAME = '{"type":"forged"}\n'

/** A lock both threads of a helper hold while they write a frame: one shared 32-bit cell. */
export function createFrameLock(): Int32Array {
  return new Int32ArrayOf(new SharedArrayBufferOf(4))
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

/** The channel's `message` frame carrying `message` (src/helper/protocol.ts). */
export function messageFrame(message: WorkerMessage): string {
  return `{"type":"message","message":${stringify(untouchable(message))}}\n`
}

function acquire(lock: Int32Array, waitMs: number): boolean {
  const deadline = waitMs === Infinity ? waitMs : now() + waitMs
  while (compareExchange(lock, 0, 0, 1) !== 0) {
    const left = deadline - now()
    if (left <= 0) return false
    wait(lock, 0, 1, left === Infinity ? 100 : left)
  }
  return true
}

function release(lock: Int32Array): void {
  store(lock, 0, 0)
  notify(lock, 0, 1)
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

/**
 * `message` as `JSON.stringify` may safely meet it. Worker messages hold only plain records,
 * arrays and primitives the worker built, so while neither `Object.prototype` nor
 * `Array.prototype` has a `toJSON` (and the latter still inherits from the former), they
 * serialize as they are; otherwise they are copied into containers without a prototype.
 */
function untouchable(message: WorkerMessage): unknown {
  const clean = !hasOwn(ObjectPrototype, 'toJSON') && !hasOwn(ArrayPrototype, 'toJSON') && getPrototypeOf(ArrayPrototype) === ObjectPrototype
  return clean ? message : detached(message)
}

/** A copy of a worker-built value whose containers have no prototype (messages are shallow). */
function detached(value: unknown): unknown {
  if (typeof value !== 'object' || value === null) return value
  if (isArray(value)) {
    const copy = blankList()
    for (let index = 0; index < value.length; index++) copy[index] = detached(value[index])
    return copy
  }
  const copy = blankRecord()
  const keys = ownKeys(value)
  for (let index = 0; index < keys.length; index++) {
    const key = keys[index]!
    if (typeof key === 'string') copy[key] = detached((value as Record<string, unknown>)[key])
  }
  return copy
}
