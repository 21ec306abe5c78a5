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
import { isArray, uncurryThis } from './intrinsics.js'

const parse = JSON.parse
const bufferAlloc = Buffer.alloc
const bufferConcat = Buffer.concat
const indexOf = uncurryThis(Buffer.prototype.indexOf) as (buffer: Buffer, value: number, from: number) => number
const slice = uncurryThis(Buffer.prototype.subarray) as (buffer: Buffer, start: number, end?: number) => Buffer
const decode = uncurryThis(Buffer.prototype.toString) as (buffer: Buffer, encoding: 'utf8') => string
const SocketOf = Socket
const setPrototypeOf = Reflect.setPrototypeOf

/** A list a setter planted on Array.prototype cannot observe (Buffer.concat takes it as is). */
function blankList(): Buffer[] {
  const list: Buffer[] = []
  setPrototypeOf(list, null)
  return list
}

const READ_BUFFER_BYTES = 64 * 1024

/**
 * Starts reading host frames from `fd`: each message goes to `receive`; a frame that is not
 * one (the program read from the descriptor and tore the stream) goes to `torn`, once.
 */
export function readInbox(fd: number, receive: (message: HostMessage) => void, torn: () => void): void {
  let pending = blankList()
  let broken = false
  const line = (bytes: Buffer) => {
    let frame: { type?: unknown; message?: HostMessage } | undefined
    try {
      frame = parse(decode(bytes, 'utf8')) as typeof frame
    } catch {
      frame = undefined
    }
    if (typeof frame !== 'object' || frame === null || isArray(frame) || frame.type !== 'relay') {
      broken = true
      return torn()
    }
    receive(frame.message!)
  }
  // The buffer is reused for every read: whatever stays pending is copied out first.
  const callback = (length: number, buffer: Buffer) => {
    if (broken) return
    const chunk = slice(buffer, 0, length)
    let start = 0
    for (let end = indexOf(chunk, 10, 0); end !== -1 && !broken; end = indexOf(chunk, 10, start)) {
      const part = slice(chunk, start, end)
      if (pending.length === 0) {
        line(part)
      } else {
        pending[pending.length] = part
        const whole = bufferConcat(pending)
        pending = blankList()
        line(whole)
      }
      start = end + 1
    }
    if (!broken && start < length) {
      const rest = blankList()
      rest[0] = slice(chunk, start)
      pending[pending.length] = bufferConcat(rest)
    }
  }
  // `onread` is documented for connect(); the constructor takes it the same way (Node 20-26).
  const options = { fd, readable: true, writable: false, onread: { buffer: bufferAlloc(READ_BUFFER_BYTES), callback } }
  const socket = new SocketOf(options as ConstructorParameters<typeof Socket>[0])
  // eslint-disable-next-line hostile-realm/captured-builtins -- called once, before any program runs
  socket.on('error', () => {
    if (!broken) torn()
    broken = true
  })
}
