/**
 * Text for a value the runtime did not make and must not trust: a tool's rejection (tools wrap
 * remote services and libraries), a caller's abort reason. The value is read without running any
 * of its code: no method, getter, `toString`, `Symbol.toPrimitive` or proxy trap is called, so no
 * value can throw inside the host or make it wait.
 */
import { types } from 'node:util'
import { getOwnPropertyDescriptor, getPrototypeOf, hasOwn, isProxy, uncurryThis } from '../../intrinsics.js'

const { isNativeError } = types
const symbolToString = uncurryThis(Symbol.prototype.toString)
/**
 * The one accessor ever called: Node's own `DOMException` message getter (the default reason of
 * `AbortController.abort()`), native code that reads an internal slot and cannot be replaced in
 * a descriptor already captured.
 */
const domExceptionMessage = getOwnPropertyDescriptor(DOMException.prototype, 'message')?.get
const readDomExceptionMessage = domExceptionMessage && uncurryThis(domExceptionMessage)

/** Longer messages are cut: the text is for a model, and a tool's message may be megabytes. */
export const MAX_FOREIGN_MESSAGE_CHARS = 16_384
/** How far up its prototype chain an error's inherited `message` is looked for. */
const MAX_PROTOTYPE_DEPTH = 16

/**
 * `value`'s message: a string as is, an error's (or error-like object's) `message` when it is a
 * data property holding a string, and otherwise a description that begins with `subject`
 * (`the tool rejected with`): `… a proxy`, `… an Error whose message cannot be read`.
 */
export function foreignMessage(value: unknown, subject: string): string {
  switch (typeof value) {
    case 'string':
      return cut(value)
    case 'symbol':
      return cut(`${subject} ${symbolToString(value)}`)
    case 'object':
    case 'function':
      if (value === null) return String(value)
      return objectMessage(value, subject)
    default:
      return String(value) // number, bigint, boolean, undefined: no code of the value runs
  }
}

function objectMessage(value: object, subject: string): string {
  if (isProxy(value)) return `${subject} a proxy`
  const message = dataProperty(value, 'message')
  if (typeof message === 'string') return cut(message)
  return isNativeError(value) ? `${subject} an Error whose message cannot be read` : `${subject} an object that is not an Error`
}

/**
 * The value of `key` where the prototype chain first defines it, when that is a data property;
 * undefined for an accessor, a proxy on the way, or an object whose own properties cannot be
 * listed without running code (a module namespace in its temporal dead zone throws).
 */
function dataProperty(start: object, key: string): unknown {
  let target: object | null = start
  for (let depth = 0; target !== null && depth < MAX_PROTOTYPE_DEPTH; depth++) {
    if (isProxy(target)) return undefined
    let descriptor: PropertyDescriptor | undefined
    try {
      descriptor = getOwnPropertyDescriptor(target, key)
      if (descriptor === undefined) target = getPrototypeOf(target) as object | null
    } catch {
      return undefined
    }
    // A descriptor is a fresh object inheriting Object.prototype: check ownership, never `in`.
    if (descriptor === undefined) continue
    if (hasOwn(descriptor, 'value')) return descriptor.value
    return descriptor.get !== undefined && descriptor.get === domExceptionMessage ? nativeMessage(start) : undefined
  }
  return undefined
}

function nativeMessage(error: object): unknown {
  try {
    return readDomExceptionMessage!(error)
  } catch {
    return undefined // not a real DOMException: the getter refuses its receiver
  }
}

function cut(text: string): string {
  return text.length <= MAX_FOREIGN_MESSAGE_CHARS ? text : `${text.slice(0, MAX_FOREIGN_MESSAGE_CHARS)}…`
}

/** The message of a run aborted with `reason` (an `AbortSignal`'s, which the caller chose). */
export function abortMessage(reason: unknown): string {
  return reason === undefined ? 'the run was aborted' : foreignMessage(reason, 'the run was aborted with')
}
