/**
 * The worker's own descriptor for host messages in a helper process (`INBOX_FD`). The host
 * writes a kept environment's runs and every binding reply there, one frame per line, and the
 * worker's event loop reads them itself: a run then wakes only the worker, not the helper's main
 * thread first. A run whose cwd the helper is not in still goes through the main thread, which
 * moves there before passing it on (a worker cannot `chdir`).
 *
 * The descriptor is read with `onread`, so Node hands each chunk straight to the callback
 * instead of through stream events a program could patch. A program that breaks Node's socket
 * internals anyway loses only its own environment's runs, to their deadlines.
 */
import { Socket } from 'node:net'
import type { HostMessage } from '../protocol.js'
import { blankList } from '../json/intrinsics.js'
import { isArray, uncurryThis } from './intrinsics.js'

// Only what no program can redirect: `subarray` and `Buffer.concat` construct through a
// `constructor` and `Symbol.species` a program may plant, and `toString` calls a replaceable
// `utf8Slice`; the typed-array methods below and views on our own buffer construct nothing.
const parse = JSON.parse
const bufferAlloc = Buffer.alloc
const Uint8ArrayOf = Uint8Array
const indexOf = uncurryThis(Uint8Array.prototype.indexOf)
const setBytes = uncurryThis(Uint8Array.prototype.set)
const utf8Slice = uncurryThis((Buffer.prototype as unknown as { utf8Slice: (start: number, end: number) => string }).utf8Slice) as (
  bytes: Uint8Array, start: number, end: number,
) => string
const SocketOf = Socket

const READ_BUFFER_BYTES = 64 * 1024
const NEWLINE = 10

/**
 * Starts reading host frames from `fd`: each message goes to `receive`; a frame that is not
 * one (the program read from the descriptor and tore the stream) goes to `torn`, once.
 */
export function readInbox(fd: number, receive: (message: HostMessage) => void, torn: () => void): void {
  // Node hands every read back in this one buffer; its bytes are seen through a view made now.
  // (A program may replace the typed-array getters: `buffer` and `byteOffset` are read now.)
  const buffer = bufferAlloc(READ_BUFFER_BYTES)
  const memory = buffer.buffer
  const offset = buffer.byteOffset
  const bytes = new Uint8ArrayOf(memory, offset, READ_BUFFER_BYTES)
  const view = (start: number, end: number) => new Uint8ArrayOf(memory, offset + start, end - start)
  /** Bytes of an unfinished line, copied out of the read buffer, with each part's size. */
  let pending = blankList() as Uint8Array[]
  let sizes = blankList() as number[]
  let pendingLength = 0
  let broken = false
  const line = (text: string) => {
    let frame: { type?: unknown; message?: HostMessage } | undefined
    try {
      frame = parse(text) as typeof frame
    } catch {
      frame = undefined
    }
    if (typeof frame !== 'object' || frame === null || isArray(frame) || frame.type !== 'relay') {
      broken = true
      return torn()
    }
    receive(frame.message!)
  }
  const callback = (length: number) => {
    if (broken) return
    let start = 0
    for (let end = indexOf(bytes, NEWLINE, 0); end !== -1 && end < length && !broken; end = indexOf(bytes, NEWLINE, start)) {
      if (pendingLength === 0) {
        line(utf8Slice(bytes, start, end))
      } else {
        const size = pendingLength + end - start
        const whole = new Uint8ArrayOf(size)
        let at = 0
        for (let index = 0; index < pending.length; index++) {
          setBytes(whole, pending[index]!, at)
          at += sizes[index]!
        }
        setBytes(whole, view(start, end), pendingLength)
        pending = blankList() as Uint8Array[]
        sizes = blankList() as number[]
        pendingLength = 0
        line(utf8Slice(whole, 0, size))
      }
      start = end + 1
    }
    if (!broken && start < length) {
      const part = new Uint8ArrayOf(length - start)
      setBytes(part, view(start, length))
      sizes[pending.length] = length - start
      pending[pending.length] = part
      pendingLength += length - start
    }
  }
  // `onread` is documented for connect(); the constructor takes it the same way (Node 20-26).
  const options = { fd, readable: true, writable: false, onread: { buffer, callback } }
  const socket = new SocketOf(options as ConstructorParameters<typeof Socket>[0])
  // eslint-disable-next-line hostile-realm/captured-builtins -- called once, before any program runs
  socket.on('error', () => {
    if (!broken) torn()
    broken = true
  })
}
