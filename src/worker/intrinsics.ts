/**
 * Functions the worker needs after a program has run, captured at module load: a program may
 * replace or patch any global, and the runtime must keep working for the rest of the run.
 */
import { MessagePort } from 'node:worker_threads'

const { apply } = Reflect
const portPost = MessagePort.prototype.postMessage

export const defineProperty = Reflect.defineProperty
export const freeze = Object.freeze
export const create = Object.create
export const getPrototypeOf = Reflect.getPrototypeOf
export const ownKeys = Reflect.ownKeys
export const schedule = setImmediate
export const isArray = Array.isArray
export const StringOf = String
export const NumberOf = Number
export const PromiseOf = Promise
export const ErrorOf = Error
export const TypeErrorOf = TypeError
export const WeakSetOf = WeakSet
export const WeakMapOf = WeakMap
export const MapOf = Map
export const weakSetHas = WeakSet.prototype.has
export const weakSetAdd = WeakSet.prototype.add
export const push = Array.prototype.push

// Node's internal exit: in a worker it stops the thread with an uncatchable termination, without
// the 'exit' handlers, `finally` blocks or microtasks that `process.exit` would still run.
const { reallyExit } = process as unknown as { reallyExit?: (code: number) => never }
const exit = typeof reallyExit === 'function' ? reallyExit : process.exit

/** Ends this worker thread now; messages already posted are still delivered. */
export function endThread(): never {
  return apply(exit, process, [0])
}

const settled = Promise.resolve()
const promiseThen = Promise.prototype.then
// `then` looks up `constructor` (a program may plant one on Promise.prototype); this promise
// answers with its own undefined, which selects the built-in Promise.
Reflect.defineProperty(settled, 'constructor', { value: undefined })

/**
 * Runs `task` in a microtask. Not Node's `queueMicrotask`: its async-context bookkeeping calls
 * `Array.prototype.pop`, which a program may have replaced.
 */
export function microtask(task: () => void): void {
  apply(promiseThen, settled, [task])
}

/** `port.postMessage(message)` immune to a patched `MessagePort.prototype`. */
export function post(port: MessagePort, message: unknown): void {
  apply(portPost, port, [message])
}

/** Calls a captured method with an explicit receiver. */
export function call<T>(method: (...args: never[]) => T, receiver: unknown, ...args: unknown[]): T {
  return apply(method as (...args: unknown[]) => T, receiver, args)
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
