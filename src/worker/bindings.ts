/**
 * Program-side bindings: one null-prototype global object per namespace, whose members are
 * async functions that cross to the host. Arguments are validated here first so a lossy
 * value never reaches the host (which validates again anyway).
 */
import { decodeWire, jsonByteLength, snapshotJson } from '../json/index.js'
import type { PtcJsonValue } from '../seam/types.js'
import { type CallMessage, type NamespaceShape, type RepliesMessage, type ReplyMessage, KEY_BOUNDS, KEY_BOUNDS_RULE, MAX_MESSAGE_KEYS, MAX_MESSAGE_VALUES, overBudgetCallMessage } from '../protocol/messages.js'
import { programFetch } from './fetch.js'
import { imageFromLeaf } from './images.js'
import { hasOwn, isArray } from '../intrinsics.js'
import { regExpExec } from '../json/intrinsics.js'
import { rememberNamespaces } from './hints.js'
import { ErrorOf, PromiseOf, TypeErrorOf, create, dataProperty, defineProperty, freeze, microtask, realmGlobal } from './intrinsics.js'
import type { Outbox } from './outbox.js'

/** A call in flight: how to settle it, and the size of its arguments (JSON bytes). */
type Settle = { resolve: (box: { value: unknown }) => void; reject: (error: Error) => void; bytes: number }
type ErrorClass = new (message?: string) => Error

/** Captured at load: a program may replace the global `Proxy` or `Reflect`. */
const ProxyOf = Proxy
const { setPrototypeOf: reflectSetPrototypeOf } = Reflect

/** Object.prototype's methods, which a namespace (no prototype) lacks: reading one says so. */
const PROTOTYPE_METHODS: Record<string, true> = create(null)
const prototypeKeys = Object.getOwnPropertyNames(Object.prototype)
for (let index = 0; index < prototypeKeys.length; index++) {
  const key = prototypeKeys[index]!
  const descriptor = Object.getOwnPropertyDescriptor(Object.prototype, key)
  if (key !== 'constructor' && descriptor !== undefined && typeof descriptor.value === 'function') PROTOTYPE_METHODS[key] = true
}

/**
 * The program's view of a frozen namespace: reads pass through, and what a frozen null-prototype
 * object answers with a bare TypeError (`Cannot add property step, object is not extensible`,
 * `tools.hasOwnProperty is not a function`) throws a message that says what to do instead.
 * The handler has no prototype, so a trap a program plants on Object.prototype is never one.
 */
function readOnlyView(namespace: object, global: string): object {
  const handler = create(null) as ProxyHandler<object>
  const refuse = (what: string, key: string | symbol = 'helper') => {
    const example = typeof key === 'string' && regExpExec(IDENTIFIER, key) !== null ? key : 'helper'
    throw new TypeErrorOf(`${what}: the tool namespace ${global} is read-only; keep helpers in your own functions or variables (const ${example} = async (...) => ...)`)
  }
  handler.set = (_target, key) => refuse(`Cannot assign ${memberLabel(global, key)}`, key)
  handler.defineProperty = (_target, key) => refuse(`Cannot define ${memberLabel(global, key)}`, key)
  handler.deleteProperty = (_target, key) => refuse(`Cannot delete ${memberLabel(global, key)}`, key)
  handler.setPrototypeOf = (target, proto) => reflectSetPrototypeOf(target, proto) || refuse(`Cannot set the prototype of ${global}`)
  handler.get = (target, key) => {
    if (typeof key === 'string' && !hasOwn(target, key) && hasOwn(PROTOTYPE_METHODS, key)) {
      throw new TypeErrorOf(`${global}.${key} does not exist: tool namespaces have no prototype; test for a tool with Object.hasOwn(${global}, name) or name in ${global}`)
    }
    return (target as Record<PropertyKey, unknown>)[key]
  }
  return new ProxyOf(namespace, handler)
}

const IDENTIFIER = /^[A-Za-z_$][\w$]*$/

function memberLabel(global: string, key: string | symbol): string {
  return typeof key === 'string' ? `${global}.${key}` : `a symbol key of ${global}`
}

function createErrorClass(name: string): ErrorClass {
  const ErrorClass = class extends ErrorOf {}
  defineProperty(ErrorClass, 'name', dataProperty(name, false, false, true))
  defineProperty(ErrorClass.prototype, 'name', dataProperty(name, false, true, true))
  return ErrorClass
}

/** Calls made by one run, and the replies that settle them. */
export class BindingBridge {
  private _pending: Record<number, Settle> = create(null)
  private _nextId = 1
  private _closed = false
  /** Calls made in this tick; posted together once the tick's microtasks have run. */
  private _outbox: CallMessage[] = []
  /** Keys, and values, of the arguments in `_outbox`: the host reads them as one message's program data, bounded in all (`_call`). */
  private _outboxKeys = 0
  private _outboxValues = 0
  private _pendingBytes = 0

  constructor(
    private readonly _post: Outbox,
    private readonly _run: number,
    private readonly _maxPendingBytes: number,
  ) {}

  /**
   * Defines every namespace and error class as a global of the environment; false when the
   * global object refused one (a program froze it or made the name non-configurable).
   */
  install(namespaces: readonly NamespaceShape[]): boolean {
    let installed = true
    rememberNamespaces(namespaces)
    // Indexed loops: in a retained environment an earlier program may have replaced the
    // array iterator.
    for (let index = 0; index < namespaces.length; index++) {
      const shape = namespaces[index]!
      if (shape.egress === true) {
        // The broker's namespace is no global of its own: the program sees it as `fetch`.
        const send = this._member(shape, 'send', undefined)
        installed = defineProperty(realmGlobal, 'fetch', dataProperty(programFetch(send), false, true, true)) && installed
        continue
      }
      const ErrorClass = shape.errorClass && createErrorClass(shape.errorClass.name)
      const namespace = create(null)
      for (let position = 0; position < shape.members.length; position++) {
        const member = shape.members[position]!
        const invoke = this._member(shape, member, ErrorClass)
        defineProperty(namespace, member, dataProperty(invoke, true, false, false))
      }
      freeze(namespace)
      const view = readOnlyView(namespace, shape.global)
      installed = defineProperty(realmGlobal, shape.global, dataProperty(view, false, false, true)) && installed
      if (ErrorClass) installed = defineProperty(realmGlobal, shape.errorClass!.name, dataProperty(ErrorClass, false, true, true)) && installed
    }
    return installed
  }

  /** Settles the calls a reply, or a batch of them, answers. */
  receive(message: ReplyMessage | RepliesMessage): void {
    if (message.type === 'reply') return this._settle(message)
    // Indexed: a program may have replaced the array iterator.
    for (let index = 0; index < message.replies.length; index++) this._settle(message.replies[index]!)
  }

  private _settle(reply: ReplyMessage): void {
    if (reply.run !== this._run) return
    const settle = this._pending[reply.id]
    if (settle === undefined) return
    delete this._pending[reply.id]
    this._pendingBytes -= settle.bytes
    if (reply.ok) settle.resolve(boxed(reply.value))
    else settle.reject(new ErrorOf(reply.message))
  }

  /**
   * The run is sending its terminal message. A binding it installed may still be called later (a
   * retained environment keeps the program's timers); such a call has no run to serve it, so it
   * rejects here instead of reaching the host as traffic of whatever run is current there.
   */
  close(): void {
    // Calls made in the run's last tick still go out, ahead of the terminal message: the host
    // records each call the program started, and reports those it never awaited.
    if (!this._closed && this._outbox.length > 0) this._flush()
    this._closed = true
  }

  private _member(shape: NamespaceShape, member: string, ErrorClass: ErrorClass | undefined) {
    const bridge = this
    const label = `${shape.global}.${member}`
    const memberProperty = shape.errorClass?.memberNameProperty
    const positional = shape.positional === true
    // A method (not a constructor), named after the member so stack frames read naturally.
    const holder = {
      async [member](first?: unknown, second?: unknown) {
        // An argument past what the member takes would never reach the host: say so rather than drop it.
        if (arguments.length > (positional ? 2 : 1)) {
          const takes = positional ? 'at most two arguments' : 'one argument (an object of named arguments)'
          throw new TypeErrorOf(`${label} takes ${takes}, got ${arguments.length}`)
        }
        // Array literals define their elements: no setter planted on Array.prototype runs.
        const args = positional ? (second === undefined ? [first] : [first, second]) : first
        let copy: PtcJsonValue | undefined
        let bytes = 0
        let keys = 0
        let values = 0
        if (args !== undefined) {
          const snapshot = snapshotJson(args, KEY_BOUNDS)
          if (!snapshot.ok && snapshot.tooManyKeys === true) {
            throw new TypeErrorOf(`${label}: the arguments hold ${snapshot.reason}, and ${KEY_BOUNDS_RULE}; pass fewer keys (a list of entries rather than an object keyed by id) or fewer values, or split the call`)
          }
          if (!snapshot.ok) throw new TypeErrorOf(`${label}: arguments must be lossless JSON (${snapshot.reason})`)
          copy = snapshot.value
          bytes = jsonByteLength(copy)
          keys = snapshot.keys ?? 0
          values = snapshot.values ?? 0
        }
        let wire: unknown
        try {
          wire = (await bridge._call(shape.global, member, copy, bytes, keys, values)).value
        } catch (failure) {
          // Created here, after the await, so V8's async stack trace reaches the program's call site.
          const message = (failure as Error).message
          if (ErrorClass === undefined) throw new ErrorOf(message)
          const error = new ErrorClass(message)
          defineProperty(error, memberProperty!, dataProperty(member, true, true, true))
          throw error
        }
        // No tokens: the tool resolved undefined, which the host sends only for a namespace
        // that converts results (a JSON value always takes at least one token).
        if (isArray(wire) && wire.length === 0) return undefined
        const decoded = decodeWire(wire, imageFromLeaf)
        if (!decoded.ok) throw new TypeErrorOf(`${label}: the tool result is not lossless JSON (${decoded.reason})`)
        return decoded.value
      },
    }
    return holder[member]!
  }

  private _call(global: string, name: string, args: PtcJsonValue | undefined, bytes: number, keys: number, values: number): Promise<{ value: unknown }> {
    return new PromiseOf((resolve, reject) => {
      if (this._closed) return reject(new ErrorOf(`${global}.${name}: the run that installed this binding has ended`))
      // The host would refuse it too (its own count is authoritative); here, no copy of the
      // arguments leaves the worker. Refused calls take no id: the host sees ids in sequence.
      if (this._pendingBytes + bytes > this._maxPendingBytes) {
        return reject(new ErrorOf(overBudgetCallMessage(`${global}.${name}`, bytes, this._maxPendingBytes)))
      }
      const id = this._nextId++
      this._pendingBytes += bytes
      this._pending[id] = { resolve, reject, bytes }
      // Literals define their fields, so setters a program planted on Object.prototype never run.
      const message: CallMessage = args === undefined
        ? { type: 'call', run: this._run, id, global, name }
        : { type: 'call', run: this._run, id, global, name, args }
      // The host reads a batch's arguments as one message's program data, which holds at most
      // MAX_MESSAGE_KEYS keys and MAX_MESSAGE_VALUES values: a call that would pass either
      // starts the next message.
      if (this._outboxKeys + keys > MAX_MESSAGE_KEYS || this._outboxValues + values > MAX_MESSAGE_VALUES) this._flush()
      const outbox = this._outbox
      outbox[outbox.length] = message
      this._outboxKeys += keys
      this._outboxValues += values
      if (outbox.length === 1) microtask(() => this._flush())
    })
  }

  private _flush(): void {
    const calls = this._outbox
    if (calls.length === 0) return // sent early, as the next call would have passed the bound
    this._outbox = []
    this._outboxKeys = 0
    this._outboxValues = 0
    if (this._closed) return // the run ended this tick; its host side no longer listens
    this._post(calls.length === 1 ? calls[0]! : { type: 'calls', run: this._run, calls })
  }
}

/**
 * A reply's tokens in a null-prototype box: resolving a promise with the bare token array would
 * adopt it as a thenable if a program planted `then` on Array.prototype or Object.prototype.
 */
function boxed(value: unknown): { value: unknown } {
  const box = create(null) as { value: unknown }
  box.value = value
  return box
}
