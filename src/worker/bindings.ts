/**
 * Program-side bindings: one null-prototype global object per namespace, whose members are
 * async functions that cross to the host. Arguments are validated here first so a lossy
 * value never reaches the host (which validates again anyway).
 */
import type { MessagePort } from 'node:worker_threads'
import { decodeWire, encodeWire, snapshotJson } from '../json/index.js'
import type { NamespaceShape, ReplyMessage } from '../protocol.js'
import { imageFromLeaf } from './images.js'
import { ErrorOf, PromiseOf, TypeErrorOf, create, defineProperty, freeze, post } from './intrinsics.js'

type Settle = { resolve: (value: unknown) => void; reject: (error: Error) => void }
type ErrorClass = new (message?: string) => Error

function createErrorClass(name: string): ErrorClass {
  const ErrorClass = class extends ErrorOf {}
  defineProperty(ErrorClass, 'name', { value: name })
  defineProperty(ErrorClass.prototype, 'name', { value: name, writable: true, configurable: true })
  return ErrorClass
}

/** Calls made by one run, and the replies that settle them. */
export class BindingBridge {
  private _pending: Record<number, Settle> = create(null)
  private _nextId = 1

  constructor(
    private readonly _port: MessagePort,
    private readonly _run: number,
  ) {}

  /** Defines every namespace and error class as a global of the environment. */
  install(namespaces: readonly NamespaceShape[]): void {
    for (const shape of namespaces) {
      const ErrorClass = shape.errorClass && createErrorClass(shape.errorClass.name)
      const namespace = create(null)
      for (const member of shape.members) {
        const invoke = this._member(shape, member, ErrorClass)
        defineProperty(namespace, member, { value: invoke, enumerable: true })
      }
      freeze(namespace)
      defineProperty(globalThis, shape.global, { value: namespace, configurable: true, writable: false })
      if (ErrorClass) defineProperty(globalThis, shape.errorClass!.name, { value: ErrorClass, configurable: true, writable: true })
    }
  }

  receive(reply: ReplyMessage): void {
    if (reply.run !== this._run) return
    const settle = this._pending[reply.id]
    if (settle === undefined) return
    delete this._pending[reply.id]
    if (reply.ok) settle.resolve(reply.value)
    else settle.reject(new ErrorOf(reply.message))
  }

  private _member(shape: NamespaceShape, member: string, ErrorClass: ErrorClass | undefined) {
    const bridge = this
    const label = `${shape.global}.${member}`
    const memberProperty = shape.errorClass?.memberNameProperty
    // A method (not a constructor), named after the member so stack frames read naturally.
    const holder = {
      async [member](args?: unknown) {
        let tokens: unknown[] | undefined
        if (args !== undefined) {
          const snapshot = snapshotJson(args)
          if (!snapshot.ok) throw new TypeErrorOf(`${label}: arguments must be lossless JSON (${snapshot.reason})`)
          tokens = encodeWire(snapshot.value)
        }
        let wire: unknown
        try {
          wire = await bridge._call(shape.global, member, tokens)
        } catch (failure) {
          // Created here, after the await, so V8's async stack trace reaches the program's call site.
          const message = (failure as Error).message
          if (ErrorClass === undefined) throw new ErrorOf(message)
          const error = new ErrorClass(message)
          defineProperty(error, memberProperty!, { value: member, enumerable: true, writable: true, configurable: true })
          throw error
        }
        const decoded = decodeWire(wire, imageFromLeaf)
        if (!decoded.ok) throw new TypeErrorOf(`${label}: the tool result is not lossless JSON (${decoded.reason})`)
        return decoded.value
      },
    }
    return holder[member]!
  }

  private _call(global: string, name: string, args: unknown[] | undefined): Promise<unknown> {
    const id = this._nextId++
    return new PromiseOf((resolve, reject) => {
      this._pending[id] = { resolve, reject }
      const message: Record<string, unknown> = { type: 'call', run: this._run, id, global, name }
      if (args !== undefined) message.args = args
      post(this._port, message)
    })
  }
}
