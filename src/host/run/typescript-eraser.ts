/**
 * The TypeScript eraser: SWC's `strip-only` transform (`@swc/wasm-typescript`), in a thread of
 * its own (eraser-worker.ts) started the first time a TypeScript program is lowered (7 MB of
 * WebAssembly a JavaScript deployment never loads).
 *
 * It is the eraser Node itself runs behind `module.stripTypeScriptTypes` (through amaro, which
 * bundles this same WebAssembly but declares Node 22 and up, so every install on Node 20 warned).
 * We call it directly on every Node version rather than the built-in where present: the built-in
 * is missing on Node 20 and 22.12, which we support, it emits an ExperimentalWarning in the host
 * process, it folds the failure's line and column into its message text, while this hands them
 * over as fields (how a model reads a TypeScript syntax error at its own position), and a trap
 * inside it would break Node's own instance, which nothing can replace.
 *
 * Lowering is synchronous (the transformer calls the eraser in the middle of it), so the host
 * waits for the thread, blocked, but only up to `ERASE_MS`: SWC backtracks over some programs
 * for seconds (each `a<` of a call's arguments is first tried as type arguments running to the
 * program's end: 64 KB of them took 6-9 s on the host's thread, holding every conversation).
 * One thread serves every conversation, so no program may break it for the next:
 * - a program is bounded in size and bracket nesting before the eraser sees it;
 * - a program it does not finish in time, or any failure that is not its own syntax error (a
 *   trap: its stack overflowing, memory out of bounds, whose memory can then no longer be
 *   trusted), ends the thread, and the next program gets a fresh one.
 */
import { createRequire } from 'node:module'
import { MessageChannel, type MessagePort, Worker, receiveMessageOnPort } from 'node:worker_threads'
import type { TypeEraser } from '../../transform/index.js'
import { ERASER_SIGNAL, type EraserReply } from './eraser-protocol.js'

/** Characters of a TypeScript program (with its wrapper) the host erases. */
export const MAX_TYPESCRIPT_CHARS = 256 * 1024

/**
 * Brackets (`(`, `[`, `{`) nested deeper than this are refused before erasing. The eraser is a
 * recursive descent whose stack overflows a few thousand levels down; a program a model writes
 * nests a few dozen. Other nesting (generics, unary chains) is left to the trap path.
 */
export const MAX_TYPESCRIPT_NESTING = 256

/**
 * How long the host waits for one program's erasure: erasing costs about 0.1 ms per KiB once
 * warm, so the longest program the size bound lets through takes about 25 ms on an idle machine.
 */
export const ERASE_MS = 250
/** How long the host waits for a fresh thread to load SWC (about 70 ms on an idle machine). */
const LOAD_MS = 10_000
const WORKER_FILE = new URL('./eraser-worker.js', import.meta.url)
const PACKAGE = '@swc/wasm-typescript'

interface EraserThread {
  readonly worker: Worker
  readonly port: MessagePort
  readonly signal: Int32Array
  /** SWC is loaded. */
  ready: boolean
}

let thread: EraserThread | undefined
/** The runtimes erasing with the thread: it ends with the last one, so a disposed runtime leaves no thread behind. */
const holders = new Set<object>()

/** Throws, naming the package, when SWC is not installed: a configuration's or a request's error. */
export function checkTypeEraser(): void {
  try {
    createRequire(import.meta.url).resolve(PACKAGE)
  } catch (error) {
    throw missing(error instanceof Error ? error.message.split('\n')[0]! : String(error))
  }
}

/** The eraser for `holder` (a runtime's program cache), starting its thread if none runs. Throws when SWC cannot be loaded. */
export function typeEraser(holder: object): TypeEraser {
  started()
  holders.add(holder)
  return erase
}

/** `holder` erases no more; the thread ends with the last holder (the next erasure starts another). */
export function releaseTypeEraser(holder: object): void {
  holders.delete(holder)
  if (holders.size === 0 && thread) end(thread)
}

function missing(reason: string): Error {
  return new Error(`TypeScript programs need the dependency ${PACKAGE}, which could not be loaded: ${reason}`)
}

/** A thread that starts loading SWC now; nothing waits for it yet. */
function spawn(): EraserThread {
  const signal = new Int32Array(new SharedArrayBuffer(4))
  const { port1, port2 } = new MessageChannel()
  const worker = new Worker(WORKER_FILE, { workerData: { port: port2, signal }, transferList: [port2] })
  worker.unref()
  return (thread = { worker, port: port1, signal, ready: false })
}

/** The thread, loaded (waiting for it if it is still loading); a fresh one when there is none. */
function started(): EraserThread {
  const current = thread ?? spawn()
  if (current.ready) return current
  Atomics.wait(current.signal, 0, ERASER_SIGNAL.busy, LOAD_MS)
  if (Atomics.load(current.signal, 0) === ERASER_SIGNAL.ready) {
    current.ready = true
    return current
  }
  const reply = receiveMessageOnPort(current.port)?.message as EraserReply | undefined
  end(current)
  throw missing(reply && 'missing' in reply ? reply.missing : `its thread did not load within ${LOAD_MS / 1000} s`)
}

/** Ends `ended`; a runtime still erasing gets its successor loading at once, off the host's thread. */
function end(ended: EraserThread, replace = false): void {
  if (thread === ended) thread = undefined
  ended.port.close()
  void ended.worker.terminate()
  if (replace && holders.size > 0) spawn()
}

function erase(source: string): string {
  if (source.length > MAX_TYPESCRIPT_CHARS) {
    throw new Error(`a TypeScript program may have at most ${MAX_TYPESCRIPT_CHARS} characters; this one has ${source.length}`)
  }
  const depth = bracketDepth(source)
  if (depth > MAX_TYPESCRIPT_NESTING) {
    throw new Error(`brackets in a TypeScript program may nest at most ${MAX_TYPESCRIPT_NESTING} deep; this one nests ${depth} deep`)
  }
  const eraser = started()
  Atomics.store(eraser.signal, 0, ERASER_SIGNAL.busy)
  eraser.port.postMessage(source)
  Atomics.wait(eraser.signal, 0, ERASER_SIGNAL.busy, ERASE_MS)
  const reply = Atomics.load(eraser.signal, 0) === ERASER_SIGNAL.answered ? (receiveMessageOnPort(eraser.port)?.message as EraserReply | undefined) : undefined
  if (reply && 'code' in reply) return reply.code
  // The eraser's own syntax error, with its position: the thread is as good as before.
  if (reply && 'syntax' in reply) throw reply.syntax
  end(eraser, true)
  if (!reply) throw new Error(`the eraser did not finish within ${ERASE_MS} ms; simplify the program's type arguments and arrow functions`)
  throw new Error(`the eraser gave up on this program (${'trap' in reply ? reply.trap : reply.missing}); it nests too deeply`)
}

/** The deepest nesting of `(`, `[` and `{` in `source`, counting brackets in strings and comments too. */
function bracketDepth(source: string): number {
  let depth = 0
  let deepest = 0
  for (let index = 0; index < source.length; index++) {
    const code = source.charCodeAt(index)
    if (code === 0x28 || code === 0x5b || code === 0x7b) {
      if (++depth > deepest) deepest = depth
    } else if ((code === 0x29 || code === 0x5d || code === 0x7d) && depth > 0) {
      depth--
    }
  }
  return deepest
}
