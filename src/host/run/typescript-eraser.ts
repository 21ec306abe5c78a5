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
 * A run awaits its program's erasure before lowering it, so the host's loop never waits for the
 * thread: SWC backtracks over some programs for seconds (each `a<` of a call's arguments is first
 * tried as type arguments running to the program's end: 64 KB of them took 6-9 s on the host's
 * thread, and 250 ms of the host's loop each when it waited for this thread blocked). The thread
 * erases one program at a time, each within a budget of the thread's CPU time that grows with
 * the program's size (`eraseBudgetMs`): every conversation's TypeScript waits behind the
 * programs before it, so a short program that makes the eraser backtrack holds the others only
 * as long as a short program may take.
 * One thread serves every conversation, so no program may break it for the next:
 * - a program is bounded in size and bracket nesting before the eraser sees it;
 * - a program it does not finish in time, or any failure that is not its own syntax error (a
 *   trap: its stack overflowing, memory out of bounds, whose memory can then no longer be
 *   trusted), ends the thread, and the next program gets a fresh one.
 */
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { MessageChannel, type MessagePort, Worker, receiveMessageOnPort } from 'node:worker_threads'
import type { EraserLoad, EraserReply } from './eraser-protocol.js'
import { untilAborted } from './until-aborted.js'

/** Characters of a TypeScript program (with its wrapper) the host erases. */
export const MAX_TYPESCRIPT_CHARS = 256 * 1024

/**
 * Brackets (`(`, `[`, `{`) nested deeper than this are refused before erasing. The eraser is a
 * recursive descent whose stack overflows a few thousand levels down; a program a model writes
 * nests a few dozen. Other nesting (generics, unary chains) is left to the trap path.
 */
export const MAX_TYPESCRIPT_NESTING = 256

/**
 * The eraser's CPU time one program may take, in ms: erasing costs about 0.1 ms per KiB once
 * warm (the longest program the size bound lets through takes about 25 ms), so ten times that,
 * over a floor for a thread that has erased little yet. CPU time, not the clock's: a loaded
 * machine never fails a program the eraser would have finished.
 */
export function eraseBudgetMs(chars: number): number {
  return ERASE_FLOOR_MS + Math.ceil(chars / 1024) * ERASE_MS_PER_KIB
}
const ERASE_FLOOR_MS = 20
const ERASE_MS_PER_KIB = 1
/**
 * The clock's deadline of one erasure where the thread's CPU time cannot be read (off Linux),
 * at least `eraseBudgetMs`; and the initializer's, whose host waits blocked.
 */
export const ERASE_MS = 250
/** A thread that takes no CPU time this long (a machine too loaded to run it) is given up on all the same. */
const ERASE_BACKSTOP_MS = 5_000
/** How often the host reads the eraser's CPU time while it erases. */
const POLL_MS = 5
/** How long the host waits for a fresh thread to load SWC (about 70 ms on an idle machine). */
export const LOAD_MS = 10_000
export const ERASER_FILE = new URL('./eraser-worker.js', import.meta.url)
const PACKAGE = '@swc/wasm-typescript'

interface EraserThread {
  readonly worker: Worker
  readonly port: MessagePort
  /** The thread's first message. */
  readonly load: Promise<EraserMessage | undefined>
  /** SWC is loaded. */
  ready: boolean
  /** The CPU time the thread has run, in ms; undefined where it cannot be read. */
  cpuMs: () => number | undefined
  /** Takes the thread's next message: set by whoever awaits it. */
  take: ((message: EraserMessage | undefined) => void) | undefined
}

type EraserMessage = EraserLoad | EraserReply

let thread: EraserThread | undefined
/**
 * A thread loading (or loaded) beside it once a program broke the serving one: the program after
 * a broken one takes this, rather than waiting about 70 ms for SWC to load again.
 */
let spare: EraserThread | undefined
/** The runtimes erasing with the thread: it ends with the last one, so a disposed runtime leaves no thread behind. */
const holders = new Set<object>()
/** Settles with the last erasure asked for: the thread erases one program at a time, and each one's deadline starts as it is handed over. */
let queue: Promise<unknown> = Promise.resolve()

/** Throws, naming the package, when SWC is not installed: a configuration's or a request's error. */
export function checkTypeEraser(): void {
  try {
    createRequire(import.meta.url).resolve(PACKAGE)
  } catch (error) {
    throw missing(error instanceof Error ? error.message.split('\n')[0]! : String(error))
  }
}

/** The eraser for `holder` (a runtime's program cache), its thread loaded. Rejects when SWC cannot be loaded. */
export async function typeEraser(holder: object): Promise<RunTypeEraser> {
  holders.add(holder)
  await loaded()
  return (source, signal) => erase(holder, source, signal)
}

/** Erases for a run, which stops waiting when `signal` aborts (its abort, or its time budget). */
export type RunTypeEraser = (source: string, signal?: AbortSignal) => Promise<string>

/** `holder` erases no more; the thread ends with the last holder (the next erasure starts another). */
export function releaseTypeEraser(holder: object): void {
  holders.delete(holder)
  if (holders.size > 0) return
  if (thread) end(thread)
  if (spare) end(spare)
}

export function missing(reason: string): Error {
  return new Error(`TypeScript programs need the dependency ${PACKAGE}, which could not be loaded: ${reason}`)
}

/** A thread that starts loading SWC now; nothing waits for it yet. */
function spawn(): EraserThread {
  const { port1, port2 } = new MessageChannel()
  const worker = new Worker(ERASER_FILE, { workerData: { port: port2 }, transferList: [port2] })
  worker.unref()
  let take: EraserThread['take']
  const load = new Promise<EraserMessage | undefined>((resolve) => (take = resolve))
  const spawned: EraserThread = { worker, port: port1, load, ready: false, cpuMs: () => undefined, take }
  port1.on('message', (message: EraserMessage) => deliver(spawned, message))
  // A thread that fails (out of memory, say) fails the program it held, never the host's process.
  worker.on('error', (error) => {
    deliver(spawned, { trap: `${error.name}: ${error.message.split('\n')[0]}` })
    end(spawned, true)
  })
  // Listening holds the host's process open; an idle eraser must not.
  port1.unref()
  return spawned
}

/** The thread, loaded (awaiting it if it is still loading); a fresh one when there is none. */
async function loaded(): Promise<EraserThread> {
  const current = (thread ??= spawn())
  if (current.ready) return current
  const loading = performance.now()
  const load = await within(current, current.load, () => performance.now() - loading >= LOAD_MS)
  if (load && 'loaded' in load) {
    current.ready = true
    if (load.thread !== undefined) current.cpuMs = threadCpuMs(load.thread)
    return current
  }
  end(current)
  throw missing(load && 'missing' in load ? load.missing : `its thread did not load within ${LOAD_MS / 1000} s`)
}

/** Reads thread `id`'s CPU time, in ms, from the kernel's scheduler statistics (nanoseconds on the CPU). */
function threadCpuMs(id: number): () => number | undefined {
  const file = `/proc/self/task/${id}/schedstat`
  return () => {
    try {
      const ns = Number(readFileSync(file, 'latin1').split(' ')[0])
      return Number.isFinite(ns) ? ns / 1e6 : undefined
    } catch {
      return undefined
    }
  }
}

/**
 * `message`, or what `eraser` posted by the time `over()` says its deadline passed: a message
 * already on its port counts, though the host's loop was too busy to take it before the timer's
 * turn. Undefined when none came.
 */
async function within(eraser: EraserThread, message: Promise<EraserMessage | undefined>, over: () => boolean): Promise<EraserMessage | undefined> {
  let timer: NodeJS.Timeout | undefined
  const deadline = new Promise<EraserMessage | undefined>((resolve) => {
    timer = setInterval(() => {
      if (!over()) return
      const waiting = eraser.take && (receiveMessageOnPort(eraser.port)?.message as EraserMessage | undefined)
      if (waiting) deliver(eraser, waiting)
      resolve(waiting)
    }, POLL_MS)
  })
  try {
    return await Promise.race([message, deadline])
  } finally {
    clearInterval(timer)
  }
}

/**
 * When the erasure of a program of `chars` characters, handed to `eraser` now, is over its
 * budget, and the budget as the program reads it.
 */
function budgetOf(eraser: EraserThread, chars: number): { over: () => boolean; limit: string } {
  const budget = eraseBudgetMs(chars)
  const size = `a program of ${Math.ceil(chars / 1024)} KiB`
  const since = performance.now()
  const start = eraser.cpuMs()
  if (start === undefined) {
    const ms = Math.max(ERASE_MS, budget)
    return { over: () => performance.now() - since >= ms, limit: `${ms} ms for ${size}` }
  }
  return {
    over: () => {
      const now = eraser.cpuMs()
      return now === undefined || now - start >= budget || performance.now() - since >= ERASE_BACKSTOP_MS
    },
    limit: `${budget} ms of its CPU time for ${size}`,
  }
}

/** Hands `eraser`'s next message (undefined: none will come) to whoever awaits it. */
function deliver(eraser: EraserThread, message: EraserMessage | undefined): void {
  const taker = eraser.take
  eraser.take = undefined
  taker?.(message)
}

/**
 * Ends `ended`. A serving thread that broke (`replace`), while runtimes still erase, is replaced
 * by the spare, and a new spare starts loading at once, off the host's thread.
 */
function end(ended: EraserThread, replace = false): void {
  if (ended === thread) thread = undefined
  else if (ended === spare) spare = undefined
  else return
  deliver(ended, undefined)
  ended.port.close()
  void ended.worker.terminate()
  if (!replace || holders.size === 0 || thread !== undefined) return
  thread = spare ?? spawn()
  spare = spawn()
}

async function erase(holder: object, source: string, signal: AbortSignal | undefined): Promise<string> {
  refuseUnbounded(source)
  const turn = queue.then(async () => {
    // A runtime disposed, or a run ended (aborted, past its time budget), while its program
    // waited for the thread takes none of the thread's time.
    if (!holders.has(holder)) throw new Error('its runtime was disposed')
    signal?.throwIfAborted()
    const eraser = await loaded()
    const reply = new Promise<EraserMessage | undefined>((resolve) => (eraser.take = resolve))
    eraser.port.postMessage(source)
    const { over, limit } = budgetOf(eraser, source.length)
    return erasedCode(await within(eraser, reply, over) as EraserReply | undefined, () => end(eraser, true), limit)
  })
  queue = turn.catch(() => undefined)
  return signal ? untilAborted(turn, signal) : turn
}

/** Throws, naming the bound, for a program over the eraser's size or nesting bound. */
export function refuseUnbounded(source: string): void {
  if (source.length > MAX_TYPESCRIPT_CHARS) {
    throw new Error(`a TypeScript program may have at most ${MAX_TYPESCRIPT_CHARS} characters; this one has ${source.length}`)
  }
  const depth = bracketDepth(source)
  if (depth > MAX_TYPESCRIPT_NESTING) {
    throw new Error(`brackets in a TypeScript program may nest at most ${MAX_TYPESCRIPT_NESTING} deep; this one nests ${depth} deep`)
  }
}

/**
 * The erased code of `reply` (undefined: none came by the deadline, `limit`), or what the program
 * sees instead; `broken` is told when the thread can no longer be trusted, and why.
 */
export function erasedCode(reply: EraserReply | undefined, broken: (failure: Error) => void, limit = `${ERASE_MS} ms`): string {
  if (reply && 'code' in reply) return reply.code
  // The eraser's own syntax error, with its position: the thread is as good as before.
  if (reply && 'syntax' in reply) throw reply.syntax
  const failure = reply
    ? new Error(`the eraser gave up on this program (${reply.trap}); it nests too deeply`)
    : new Error(`the eraser did not finish within its budget of ${limit}; simplify the program's type arguments and arrow functions`)
  broken(failure)
  throw failure
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
