/**
 * Functions the worker needs after a program has run, captured at module load: a program may
 * replace or patch any global, and the runtime must keep working for the rest of the run. How
 * they are called is described in src/intrinsics.ts.
 */
import type { MessagePort } from 'node:worker_threads'
import {
  TypeErrorOf,
  apply,
  defineProperty,
  getOwnPropertyDescriptor,
  getPrototypeOf,
  isArray,
  ownKeys,
  realmGlobal,
  uncurryThis,
  weakSetAdd,
  weakSetHas,
} from '../intrinsics.js'

export { TypeErrorOf, apply, defineProperty, getOwnPropertyDescriptor, getPrototypeOf, isArray, ownKeys, realmGlobal, uncurryThis, weakSetAdd, weakSetHas }
export const realmProcess = process
export const freeze = Object.freeze
export const create = Object.create
export const assign = Object.assign
export const schedule = setImmediate
export const StringOf = String
export const NumberOf = Number
export const PromiseOf = Promise
export const ErrorOf = Error
export const Uint8ArrayOf = Uint8Array
export const WeakSetOf = WeakSet
export const WeakMapOf = WeakMap
export const weakMapGet = uncurryThis(WeakMap.prototype.get)
export const weakMapSet = uncurryThis(WeakMap.prototype.set)

// Node's internal exit: in a worker it stops the thread with an uncatchable termination, without
// the 'exit' handlers, `finally` blocks or microtasks that `process.exit` would still run.
const { reallyExit } = process as unknown as { reallyExit?: (code: number) => never }
const exit = uncurryThis(typeof reallyExit === 'function' ? reallyExit : process.exit)

/** Ends this worker thread now; messages already posted are still delivered. */
export function endThread(): never {
  return exit(realmProcess, 0)
}

/** What this thread uses of `Atomics`, and `SharedArrayBuffer`. */
export interface Atomic {
  wait: typeof Atomics.wait
  compareExchange: typeof Atomics.compareExchange
  store: typeof Atomics.store
  notify: typeof Atomics.notify
  SharedArrayBuffer: SharedArrayBufferConstructor
}

/**
 * Captured by `captureAtomics`, not as this module loads: Node removes `Atomics` and
 * `SharedArrayBuffer` while a startup snapshot is made (src/worker/snapshot.ts) and gives them
 * back to each process restored from it.
 */
export let atomic: Atomic
let neverNotified: Int32Array

/**
 * Captures `Atomics` and `SharedArrayBuffer`; called first when a thread starts the environment,
 * or a helper's own main thread, before any program runs.
 */
export function captureAtomics(): void {
  /* eslint-disable hostile-realm/captured-builtins -- this is the capture, before any program */
  atomic = { wait: Atomics.wait, compareExchange: Atomics.compareExchange, store: Atomics.store, notify: Atomics.notify, SharedArrayBuffer }
  neverNotified = new Int32Array(new SharedArrayBuffer(4))
  /* eslint-enable hostile-realm/captured-builtins */
}

/** Blocks this worker thread for `ms`: nothing of the program runs meanwhile. */
export function blockThread(ms: number): void {
  atomic.wait(neverNotified, 0, 0, ms)
}

const settled = Promise.resolve()
const promiseThen = uncurryThis(Promise.prototype.then)
// `then` looks up `constructor` (a program may plant one on Promise.prototype); this promise
// answers with its own undefined, which selects the built-in Promise.
defineProperty(settled, 'constructor', { value: undefined })

/**
 * Runs `task` in a microtask. Not Node's `queueMicrotask`: its async-context bookkeeping calls
 * `Array.prototype.pop`, which a program may have replaced.
 */
export function microtask(task: () => void): void {
  void promiseThen(settled, task)
}

// The global, not `node:worker_threads`' (the same class): a startup snapshot must not hold that
// module (snapshot.ts).
const postMessage = uncurryThis(globalThis.MessagePort.prototype.postMessage)

/** `port.postMessage(message)` immune to a patched `MessagePort.prototype`. */
export function post(port: MessagePort, message: unknown): void {
  postMessage(port, message)
}

/**
 * A data descriptor with a null prototype and every attribute explicit: a `get`, `set` or
 * `value` a program planted on Object.prototype would otherwise be read as part of a plain
 * descriptor literal and make it invalid.
 */
export function dataProperty(value: unknown, enumerable: boolean, writable: boolean, configurable: boolean): PropertyDescriptor {
  const descriptor = create(null) as PropertyDescriptor
  descriptor.value = value
  descriptor.enumerable = enumerable
  descriptor.writable = writable
  descriptor.configurable = configurable
  return descriptor
}

/** `error` with Node's `code` property (not enumerable, as Node's own errors carry it). */
export function withCode<E extends Error>(error: E, code: string): E {
  defineProperty(error, 'code', dataProperty(code, false, true, true))
  return error
}
