/**
 * The TypeScript eraser's thread (typescript-eraser.ts says why it is one): SWC's `strip-only`
 * transform, one program at a time. Its first message says whether SWC loaded, then it answers
 * each program on `port`; the host awaits each answer with a deadline, past which it terminates
 * this thread and starts another. A host waiting blocked (initializer-eraser.ts) also gets
 * `signal`, set as each message is posted.
 */
import { readlinkSync } from 'node:fs'
import { createRequire } from 'node:module'
import { type MessagePort, workerData } from 'node:worker_threads'
import { ERASER_SIGNAL, type EraserLoad, type EraserReply } from './eraser-protocol.js'

interface SwcEraser {
  transformSync(source: string, options: { mode: 'strip-only'; deprecatedTsModuleAsError: boolean }): { code: string }
}

const { port, signal } = workerData as { port: MessagePort; signal?: Int32Array }

function post(message: EraserLoad | EraserReply): void {
  port.postMessage(message)
  if (!signal) return
  Atomics.store(signal, 0, ERASER_SIGNAL.posted)
  Atomics.notify(signal, 0)
}

let swc: SwcEraser | undefined
try {
  swc = createRequire(import.meta.url)('@swc/wasm-typescript') as SwcEraser
} catch (error) {
  post({ missing: error instanceof Error ? error.message.split('\n')[0]! : String(error) })
}

if (swc) {
  const eraser = swc
  port.on('message', (source: string) => {
    let reply: EraserReply
    try {
      // `module N {}` is refused as Node refuses it (amaro's default): it means `namespace`, which strip-only cannot erase.
      reply = { code: eraser.transformSync(source, { mode: 'strip-only', deprecatedTsModuleAsError: true }).code }
    } catch (error) {
      reply = isSyntaxFailure(error) ? { syntax: error as object } : { trap: error instanceof Error ? `${error.name}: ${error.message.split('\n')[0]}` : String(error) }
    }
    post(reply)
  })
  // Its first transform compiles much of SWC's code: done here, it is not charged to a program.
  eraser.transformSync('const warm: number = 1', { mode: 'strip-only', deprecatedTsModuleAsError: true })
  post({ loaded: true, thread: threadId() })
}

/** This thread's id in its process (`/proc/thread-self` is `<pid>/task/<tid>`); undefined off Linux. */
function threadId(): number | undefined {
  try {
    const id = Number(readlinkSync('/proc/thread-self').split('/').pop())
    return Number.isSafeInteger(id) ? id : undefined
  } catch {
    return undefined
  }
}

/** The eraser's own refusal of a program: an object with a `code` and the failure's position. */
function isSyntaxFailure(error: unknown): boolean {
  if (typeof error !== 'object' || error === null || error instanceof Error) return false
  const { code, startLine } = error as { code?: unknown; startLine?: unknown }
  return typeof code === 'string' && typeof startLine === 'number'
}
