/**
 * The worker's own descriptor for host messages in a helper process (`INBOX_FD`). The host
 * writes a kept environment's runs and every binding reply there, one frame per line
 * (src/protocol/frames.ts), and the worker's event loop reads them itself: a run then wakes only the
 * worker, not the helper's main thread first. A run whose cwd the helper is not in still goes
 * through the main thread, which moves there before passing it on (a worker cannot `chdir`).
 * A helper whose main thread holds the program's realm (helper-process.ts) reads its channel
 * the same way.
 *
 * The descriptor is read with `onread`, so Node hands each chunk straight to the callback
 * instead of through stream events a program could patch. A program that breaks Node's socket
 * internals anyway loses only its own environment's runs, to their deadlines.
 */
import { Socket } from 'node:net'
import type { HostMessage } from '../protocol/messages.js'
import { FrameReader, parseHostFrame } from '../protocol/frames.js'

const bufferAlloc = Buffer.alloc
const SocketOf = Socket

const READ_BUFFER_BYTES = 64 * 1024

/**
 * What reads host frames from bytes as they arrive: each message goes to `receive`; a frame that
 * is not one (the program read from the descriptor and tore the stream) goes to `torn`, once.
 * Given the first `length` bytes of `bytes` each time. The rehearsal (rehearsal.ts) feeds it too.
 */
export function frameReceiver(receive: (message: HostMessage) => void, torn: () => void): (bytes: Uint8Array, length: number) => void {
  const reader = new FrameReader(Infinity)
  let broken = false
  const frame = (raw: unknown) => {
    const parsed = parseHostFrame(raw)
    if (parsed === undefined) return false
    receive(parsed.message)
    return true
  }
  return (bytes, length) => {
    if (broken || reader.read(bytes, length, frame)) return
    broken = true
    torn()
  }
}

/**
 * Starts reading host frames from `fd` (`frameReceiver`); the host's end of the descriptor
 * closing goes to `ended`, if given.
 */
export function readInbox(fd: number, receive: (message: HostMessage) => void, torn: () => void, ended?: () => void): void {
  // Node hands every read back in this one buffer; the reader copies out an unfinished line.
  const buffer = bufferAlloc(READ_BUFFER_BYTES)
  let broken = false
  const tornOnce = () => {
    if (!broken) torn()
    broken = true
  }
  const read = frameReceiver(receive, tornOnce)
  const callback = (length: number) => read(buffer, length)
  // `onread` is documented for connect(); the constructor takes it the same way (Node 20-26).
  const options = { fd, readable: true, writable: false, onread: { buffer, callback } }
  const socket = new SocketOf(options as ConstructorParameters<typeof Socket>[0])
  // eslint-disable-next-line hostile-realm/captured-builtins -- called once, before any program runs
  socket.on('error', tornOnce)
  // eslint-disable-next-line hostile-realm/captured-builtins -- called once, before any program runs
  if (ended) socket.on('end', ended)
}
