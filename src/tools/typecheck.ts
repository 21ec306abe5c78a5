/**
 * Type-checking a program against the declarations the model read, before it runs: a wrong
 * argument shape or a misspelled tool fails in milliseconds, with the compiler's message at the
 * program's own line and column, instead of after the calls before it have run.
 *
 * The compiler never runs on the host's thread: a type-level bomb of a few lines holds a
 * compiler for seconds and takes gigabytes. Each check runs in a worker thread with a heap
 * budget (`resourceLimits`; on TypeScript 7 the native compiler's own process is watched
 * against the same budget) and the run's deadline, and is killed when either runs out: the
 * run fails saying so, and the next check gets a fresh worker. The compiler's own time on one
 * program is bounded too (`maxCheckMs`): a model's program checks in well under a second, so a
 * bomb holds a worker seconds, not the run's minutes. A warm worker is kept between checks (the
 * standard library and the declarations stay parsed); a second check while one runs gets a
 * worker of its own, up to MAX_WORKERS; which waiting check gets the next one is check-slots.ts's
 * rule, so conversations sending bombs cannot take every worker from the others.
 * TypeScript is an optional peer dependency (5.x, 6 or 7), loaded by the worker.
 */
import { existsSync, readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import path from 'node:path'
import { Worker } from 'node:worker_threads'
import type { PtcProgramFormat } from '../seam/types.js'
import { CheckSlots } from './check-slots.js'
import { type CheckerSetup, type WorkerMessage, lenientDeclarations } from './typecheck-protocol.js'
import { type TypescriptLocation, locateTypescript } from './typescript-location.js'

/** Checks at once, each in a worker of its own (a worker with TypeScript loaded is ~100 MB). */
const MAX_WORKERS = 2
/** A warm worker left idle this long is closed, so an idle tool holds no thread or process. */
const IDLE_MS = 30_000
/** How often the native compiler's memory is read while it checks (TypeScript 7, Linux). */
const WATCH_MS = 50
/** Default heap budget of one check, in MB. */
export const DEFAULT_TYPECHECK_MEMORY_MB = 512
/** Default time bound of the compiler's work on one program, in ms. */
export const DEFAULT_CHECK_MS = 10_000

const WORKER_FILE = new URL('./typecheck-worker.js', import.meta.url)

/** How one check ended: the compiler's messages (`mistakes`), or a failure of the check itself. */
export type CheckOutcome =
  | { ok: true; mistakes: string | undefined }
  /** `overran`: the check held its worker until a time or memory bound. */
  | { ok: false; kind: 'timeout' | 'abort' | 'exception'; message: string; overran?: true }

/** What bounds one check. */
export interface CheckLimits {
  /** The run's budget, in ms (Infinity for none): waiting for a checker and checking together. */
  timeoutMs: number
  signal?: AbortSignal | undefined
  /** Whose check this is (the conversation), for the order of waiting checks (check-slots.ts). */
  owner?: object | undefined
}

/** Where the checker loads TypeScript from, and how much memory one check may take. */
export interface CheckerOptions {
  /** The TypeScript package directory; default: the `typescript` this package resolves. */
  typescript?: string | undefined
  /** Heap budget of one check, in MB; default 512. */
  maxMemoryMb?: number | undefined
  /** Time bound of one check, in ms, whatever the run's budget; default 10 000. */
  maxCheckMs?: number | undefined
}

/** Checks programs of one format against one set of declarations. */
export interface ProgramChecker {
  check(program: string, limits: CheckLimits): Promise<CheckOutcome>
  /** Ends the warm workers; a later check starts a new one. */
  close(): Promise<void>
}

interface Checking {
  worker: Worker
  pid: number | undefined
  idle: NodeJS.Timeout | undefined
}

/**
 * A checker for `format` programs against `declarations`; its workers start at the first check.
 * Throws when TypeScript cannot be found or a budget is not one.
 */
export function createProgramChecker(declarations: string, format: PtcProgramFormat, options: CheckerOptions = {}): ProgramChecker {
  const maxMemoryMb = options.maxMemoryMb ?? DEFAULT_TYPECHECK_MEMORY_MB
  if (!Number.isSafeInteger(maxMemoryMb) || maxMemoryMb < 64) throw new TypeError(`typecheck: maxMemoryMb must be an integer of at least 64, got ${maxMemoryMb}`)
  const maxCheckMs = options.maxCheckMs ?? DEFAULT_CHECK_MS
  if (!Number.isSafeInteger(maxCheckMs) || maxCheckMs < 100 || maxCheckMs > 600_000) {
    throw new TypeError(`typecheck: maxCheckMs must be an integer from 100 to 600000, got ${maxCheckMs}`)
  }
  const setup: CheckerSetup = { declarations: lenientDeclarations(declarations), format, typescript: typescriptOf(options.typescript) }
  const idle: Checking[] = []
  const slots = new CheckSlots(MAX_WORKERS, maxCheckMs)
  let nextId = 0
  /** Counts close() calls: a check that began before the last one leaves no worker parked. */
  let closes = 0

  async function start(deadline: Promise<CheckOutcome>): Promise<Checking | CheckOutcome> {
    const worker = new Worker(WORKER_FILE, {
      workerData: setup,
      resourceLimits: { maxOldGenerationSizeMb: maxMemoryMb, maxYoungGenerationSizeMb: 32 },
      // The native compiler's garbage collector aims below the budget too; the watch enforces it.
      env: { ...process.env, GOMEMLIMIT: `${maxMemoryMb}MiB` },
      stdout: true,
      stderr: true,
    })
    const ready = new Promise<Checking | CheckOutcome>((resolve) => {
      worker.once('message', (message: WorkerMessage) => {
        if (message.type === 'ready') resolve({ worker, pid: message.pid, idle: undefined })
        else resolve({ ok: false, kind: 'exception', message: message.type === 'unavailable' ? message.message : 'the type check did not start' })
      })
      worker.once('error', (error) => resolve(workerFailure(error, maxMemoryMb)))
      worker.once('exit', () => resolve({ ok: false, kind: 'exception', message: 'the type check ended before it started' }))
    })
    const started = await Promise.race([ready, deadline])
    if (!('worker' in started)) void end({ worker, pid: undefined, idle: undefined })
    return started
  }

  /** A worker for `owner`'s check, in a slot of its own (see check-slots.ts). */
  async function acquire(owner: object | undefined, deadline: Promise<CheckOutcome>): Promise<Checking | CheckOutcome> {
    const refused = slots.refusal(owner)
    if (refused !== undefined) return { ok: false, kind: 'exception', message: refused }
    const stopped = await slots.take(owner, deadline)
    if (stopped) return stopped
    const warm = idle.pop()
    if (warm) {
      clearTimeout(warm.idle)
      warm.worker.ref()
      return warm
    }
    const started = await start(deadline)
    if (!('worker' in started)) slots.give(owner, false)
    return started
  }

  function park(checking: Checking, owner: object | undefined, closesAtStart: number): void {
    if (closes !== closesAtStart) {
      void end(checking)
      slots.give(owner, false)
      return
    }
    checking.worker.unref()
    checking.idle = setTimeout(() => {
      idle.splice(idle.indexOf(checking), 1)
      void end(checking)
    }, IDLE_MS).unref()
    idle.push(checking)
    slots.give(owner, false)
  }

  return {
    async check(program, { timeoutMs, signal, owner }) {
      const { promise: deadline, cancel } = deadlineOf(timeoutMs, signal)
      const closesAtStart = closes
      let stopWatch: (() => void) | undefined
      try {
        const checking = await acquire(owner, deadline)
        if (!('worker' in checking)) return checking
        // The compiler's own time, counted once it has the program: waiting counts against the run's budget only.
        const watch = stopwatch(maxCheckMs)
        stopWatch = watch.cancel
        const outcome = await Promise.race([ask(checking, nextId++, program, maxMemoryMb), deadline, watch.promise])
        if (outcome.ok) park(checking, owner, closesAtStart)
        else {
          await end(checking)
          slots.give(owner, outcome.overran === true)
        }
        return outcome
      } finally {
        cancel()
        stopWatch?.()
      }
    },
    async close() {
      closes++
      const parked = idle.splice(0)
      for (const checking of parked) clearTimeout(checking.idle)
      await Promise.all(parked.map(end))
    },
  }
}

/** Sends one program and waits for its answer, the worker's death, or the compiler outgrowing its budget. */
function ask({ worker, pid }: Checking, id: number, program: string, maxMemoryMb: number): Promise<CheckOutcome> {
  let settle: (outcome: CheckOutcome) => void = () => {}
  const answered = new Promise<CheckOutcome>((resolve) => {
    settle = resolve
  })
  const watch = pid === undefined ? undefined : setInterval(() => {
    if (residentMb(pid) > maxMemoryMb) settle(memoryFailure(maxMemoryMb))
  }, WATCH_MS)
  const onMessage = (message: WorkerMessage) => {
    if (message.type === 'checked' && message.id === id) settle({ ok: true, mistakes: message.mistakes })
  }
  const onError = (error: Error) => settle(workerFailure(error, maxMemoryMb))
  const onExit = () => settle({ ok: false, kind: 'exception', message: 'The type check ended without an answer; nothing ran.' })
  worker.on('message', onMessage).on('error', onError).on('exit', onExit)
  worker.postMessage({ id, program })
  return answered.finally(() => {
    clearInterval(watch)
    worker.off('message', onMessage).off('error', onError).off('exit', onExit)
  })
}

/**
 * The TypeScript package Node resolves from this package, located once as it loads, before any
 * program runs: a `typescript` (or TypeScript 7's compiler) a program plants later in a writable
 * `node_modules` on this package's resolution path is never loaded by this process (its checker
 * threads run in the host, outside every sandbox). The reason it was not found, when it was not.
 */
const installedTypescript: TypescriptLocation | { missing: string } = (() => {
  try {
    return locateTypescript(path.dirname(createRequire(import.meta.url).resolve('typescript/package.json')))
  } catch (error) {
    return { missing: error instanceof Error ? error.message.split('\n')[0]! : String(error) }
  }
})()

/** The TypeScript to load, found now so a missing one fails at configuration. */
function typescriptOf(given: string | undefined): TypescriptLocation {
  if (given !== undefined) {
    if (typeof given !== 'string' || !existsSync(path.join(given, 'package.json'))) {
      throw new Error(`typecheck: typescript must be the directory of a TypeScript package (one holding its package.json), got ${JSON.stringify(given)}`)
    }
    try {
      return locateTypescript(path.resolve(given))
    } catch (error) {
      throw new Error(`typecheck: the TypeScript at ${given} cannot check programs: ${(error as Error).message}`)
    }
  }
  if ('directory' in installedTypescript) return installedTypescript
  throw new Error(`typecheck needs the typescript package (an optional peer dependency), which this process did not find as it started: ${installedTypescript.missing}`)
}

/** Ends a worker and the native compiler it started, if any. */
async function end({ worker, pid }: Checking): Promise<void> {
  // A worker blocked in the native compiler's synchronous read returns only when it dies.
  if (pid !== undefined) {
    try {
      process.kill(pid, 'SIGKILL')
    } catch {
      // already gone
    }
  }
  await worker.terminate()
}

/** The run's budget (`timeoutMs`, Infinity for none) and its abort, as a check's outcome. */
function deadlineOf(timeoutMs: number, signal: AbortSignal | undefined): { promise: Promise<CheckOutcome>; cancel: () => void } {
  let timer: NodeJS.Timeout | undefined
  let onAbort: (() => void) | undefined
  const promise = new Promise<CheckOutcome>((resolve) => {
    if (timeoutMs !== Number.POSITIVE_INFINITY) timer = setTimeout(() => resolve(overtime(timeoutMs, "the run's time budget")), timeoutMs)
    onAbort = () => resolve({ ok: false, kind: 'abort', message: 'The run was aborted during its type check; nothing ran.' })
    if (signal?.aborted) onAbort()
    else signal?.addEventListener('abort', onAbort, { once: true })
  })
  return {
    promise,
    cancel: () => {
      clearTimeout(timer)
      if (onAbort) signal?.removeEventListener('abort', onAbort)
    },
  }
}

/** The bound of the compiler's own time on one program. */
function stopwatch(maxCheckMs: number): { promise: Promise<CheckOutcome>; cancel: () => void } {
  let timer: NodeJS.Timeout | undefined
  const promise = new Promise<CheckOutcome>((resolve) => {
    timer = setTimeout(() => resolve(overtime(maxCheckMs, 'typecheck.maxCheckMs')), maxCheckMs)
  })
  return { promise, cancel: () => clearTimeout(timer) }
}

function overtime(ms: number, bound: string): CheckOutcome {
  return { ok: false, kind: 'timeout', message: `The type check did not finish within ${ms} ms (${bound}); nothing ran. Simplify the program's types.`, overran: true }
}

function memoryFailure(maxMemoryMb: number): CheckOutcome {
  return { ok: false, kind: 'exception', message: `The type check ran out of its memory budget (${maxMemoryMb} MB); nothing ran. Simplify the program's types.`, overran: true }
}

function workerFailure(error: Error, maxMemoryMb: number): CheckOutcome {
  if ((error as { code?: string }).code === 'ERR_WORKER_OUT_OF_MEMORY') return memoryFailure(maxMemoryMb)
  return { ok: false, kind: 'exception', message: `The type check failed (${error.message}); nothing ran.` }
}

/** Resident memory of a process in MB, from /proc (Linux); 0 where it cannot be read. */
function residentMb(pid: number): number {
  try {
    const pages = Number(readFileSync(`/proc/${pid}/statm`, 'utf8').split(' ')[1])
    return (pages * 4096) / (1024 * 1024)
  } catch {
    return 0
  }
}
