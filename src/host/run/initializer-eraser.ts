/**
 * The environment initializer's TypeScript eraser, waited for blocked: registering an initializer
 * is synchronous (it throws the program's syntax error then), and happens once, before its
 * runtime's first run, with the deployment's own program. Every run's program is awaited
 * instead (typescript-eraser.ts). The initializer gets a thread of its own, ended with its
 * erasure, so this wait never queues behind the programs on the shared thread.
 */
import { MessageChannel, Worker, receiveMessageOnPort } from 'node:worker_threads'
import { eraseTypes } from '../../transform/index.js'
import { ERASER_SIGNAL, type EraserLoad, type EraserReply } from './eraser-protocol.js'
import { ERASE_MS, ERASER_FILE, LOAD_MS, erasedCode, missing, refuseUnbounded } from './typescript-eraser.js'

/** `source` with its types erased, as `eraseTypes` gives it. Throws ProgramSyntaxError, or when SWC cannot be loaded. */
export function eraseInitializerTypes(source: string): string {
  const signal = new Int32Array(new SharedArrayBuffer(4))
  const { port1, port2 } = new MessageChannel()
  const worker = new Worker(ERASER_FILE, { workerData: { port: port2, signal }, transferList: [port2] })
  // A thread that fails answers nothing, which the wait reads as its deadline; its error must not
  // reach the host's process as an uncaught one.
  worker.on('error', () => {})
  const next = <T>(ms: number): T | undefined => {
    Atomics.wait(signal, 0, ERASER_SIGNAL.waiting, ms)
    return receiveMessageOnPort(port1)?.message as T | undefined
  }
  try {
    const load = next<EraserLoad>(LOAD_MS)
    if (!load || 'missing' in load) throw missing(load ? load.missing : `its thread did not load within ${LOAD_MS / 1000} s`)
    // Past a trap or the deadline the thread is not asked again: a late answer would be taken for the next one's.
    let broken: unknown
    return eraseTypes(source, (text) => {
      if (broken) throw broken
      refuseUnbounded(text)
      Atomics.store(signal, 0, ERASER_SIGNAL.waiting)
      port1.postMessage(text)
      return erasedCode(next<EraserReply>(ERASE_MS), (failure) => (broken = failure))
    })
  } finally {
    port1.close()
    void worker.terminate()
  }
}
