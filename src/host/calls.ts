/**
 * The host side of binding calls for one run: checks each call against the declared
 * namespaces (own properties only, so `__proto__` or `constructor` never reach a prototype),
 * re-validates arguments, invokes the host function, validates what it resolved and replies
 * exactly once per call id. Replies stop when the run settles.
 */
import { decodeWire, encodeWire, jsonByteLength, snapshotJson } from '../json/index.js'
import { type CallMessage, type RepliesMessage, type ReplyMessage, overBudgetCallMessage } from '../protocol.js'
import { PtcImage } from '../seam/image.js'
import { foreignMessage } from './foreign-message.js'
import type { ImageAttachmentRef, PtcBindingFunction, PtcBindingNamespace, PtcJsonValue } from '../seam/types.js'

const { hasOwn } = Object
const MEDIA_TYPES: ReadonlySet<string> = new Set(['image/png', 'image/jpeg', 'image/webp', 'image/gif'])
const positiveInteger = (value: unknown) => Number.isSafeInteger(value) && (value as number) > 0

/** A copy of the attachment in canonical key order, or why it is not well formed. */
export function checkImage(image: PtcImage): ImageAttachmentRef | string {
  const { path, attachment } = image
  if (typeof path !== 'string' || !path.startsWith('/')) return 'its path must be an absolute path'
  if (typeof attachment !== 'object' || attachment === null) return 'it has no attachment'
  const { attachmentId, mediaType, bytes, width, height, name } = attachment
  if (typeof attachmentId !== 'string' || attachmentId === '') return 'attachment.attachmentId must be a non-empty string'
  if (!MEDIA_TYPES.has(mediaType)) return `attachment.mediaType must be one of ${[...MEDIA_TYPES].join(', ')}`
  if (!positiveInteger(bytes)) return 'attachment.bytes must be a positive integer'
  if (!positiveInteger(width) || !positiveInteger(height)) return 'attachment.width and height must be positive integers'
  if (name !== undefined && typeof name !== 'string') return 'attachment.name must be a string when given'
  const copy: ImageAttachmentRef = { attachmentId, mediaType, bytes, width, height }
  if (name !== undefined) copy.name = name
  return copy
}

export interface CallHost {
  /** Sends `message`; `written` once the environment took it (a helper's socket flushed it). */
  reply(message: ReplyMessage | RepliesMessage, written: () => void): void
  /** The call broke the protocol; the run must fail with `protocol`. */
  violation(reason: string): void
  issued(attachment: ImageAttachmentRef): void
  /** A host function holds its call for a decision (`PtcBindingCall.hold`). */
  hold(tool: string, args: unknown, payload: unknown): Promise<PtcJsonValue | undefined>
}

export class CallDispatcher {
  private _nextId = 1
  private _pending = 0
  /** JSON bytes of the arguments of the calls in flight. */
  private _pendingBytes = 0
  private _open = true
  private readonly _controller = new AbortController()
  /**
   * Replies ready in this tick, sent together once the tick's microtasks have run, with the
   * argument bytes of their calls: a call counts as pending until its reply has been written,
   * so a program that stops reading its replies cannot make the host buffer them without bound.
   */
  private _outbox: Array<{ reply: ReplyMessage; bytes: number }> = []

  constructor(
    private readonly _run: number,
    private readonly _bindings: readonly PtcBindingNamespace[],
    private readonly _maxPending: number,
    private readonly _maxPendingBytes: number,
    private readonly _host: CallHost,
  ) {}

  /** Stops replying and aborts `call.signal` for every in-flight host function. */
  close(): void {
    this._open = false
    this._controller.abort(new Error('the run has settled'))
  }

  dispatch(call: CallMessage): void {
    if (call.id !== this._nextId) return this._host.violation(`binding call id ${call.id} is out of sequence`)
    this._nextId++
    if (++this._pending > this._maxPending) {
      return this._host.violation(`more than ${this._maxPending} binding calls are pending at once (maxPendingCalls)`)
    }
    const namespace = this._bindings.find((candidate) => candidate.global === call.global)
    const fn = namespace && hasOwn(namespace.functions, call.name) ? namespace.functions[call.name] : undefined
    if (typeof fn !== 'function') return this._host.violation(`a call to the undeclared binding ${call.global}.${call.name}`)
    let args: unknown
    if (call.args !== undefined) {
      const decoded = decodeWire(call.args)
      if (!decoded.ok) return this._host.violation(`binding arguments that are not lossless JSON (${decoded.reason})`)
      args = decoded.value
    }
    // Arguments the host holds for tools are bounded: over budget, the call fails in the
    // program and its arguments are dropped here, never passed on or kept.
    const bytes = args === undefined ? 0 : jsonByteLength(args as PtcJsonValue)
    if (this._pendingBytes + bytes > this._maxPendingBytes) {
      const message = overBudgetCallMessage(`${call.global}.${call.name}`, bytes, this._maxPendingBytes)
      return this._queue({ type: 'reply', run: this._run, id: call.id, ok: false, message }, 0)
    }
    this._pendingBytes += bytes
    void this._invoke(call, fn, args, bytes)
  }

  private async _invoke(call: CallMessage, fn: PtcBindingFunction, args: unknown, bytes: number): Promise<void> {
    const label = `${call.global}.${call.name}`
    let reply: ReplyMessage
    let inFlight = true
    const hold = (payload: PtcJsonValue) =>
      inFlight ? this._host.hold(label, args, payload) : Promise.reject(new Error(`${label} has settled; only a call in flight can be held`))
    try {
      const value = await fn(args, { signal: this._controller.signal, hold })
      reply = this._resolution(call.id, label, value)
    } catch (error) {
      const message = foreignMessage(error, 'the tool rejected with')
      reply = { type: 'reply', run: this._run, id: call.id, ok: false, message }
    }
    inFlight = false
    this._queue(reply, bytes)
  }

  private _queue(reply: ReplyMessage, bytes: number): void {
    if (!this._open) return
    this._outbox.push({ reply, bytes })
    if (this._outbox.length === 1) queueMicrotask(() => this._flush())
  }

  private _flush(): void {
    const entries = this._outbox
    this._outbox = []
    if (!this._open) return
    const replies = entries.map((entry) => entry.reply)
    this._host.reply(replies.length === 1 ? replies[0]! : { type: 'replies', run: this._run, replies }, () => {
      this._pending -= entries.length
      for (const { bytes } of entries) this._pendingBytes -= bytes
    })
  }

  private _resolution(id: number, label: string, value: unknown): ReplyMessage {
    const fail = (message: string): ReplyMessage => ({ type: 'reply', run: this._run, id, ok: false, message })
    if (value === undefined) return fail(`${label} resolved undefined; tools must resolve JSON values (use null for nothing)`)
    let badImage: string | undefined
    const images = new Map<object, Record<string, string | number>>()
    const snapshot = snapshotJson(value, {
      leaf: (candidate) => {
        if (!(candidate instanceof PtcImage)) return undefined
        const attachment = checkImage(candidate)
        if (typeof attachment === 'string') {
          badImage ??= attachment
          return candidate
        }
        images.set(candidate, { path: candidate.path, ...attachment })
        this._host.issued(attachment)
        return candidate
      },
    })
    if (badImage !== undefined) return fail(`${label} resolved an invalid PtcImage: ${badImage}`)
    if (!snapshot.ok) return fail(`${label} resolved a value that is not lossless JSON (${snapshot.reason})`)
    const tokens = encodeWire(snapshot.value, (leaf) => images.get(leaf)!)
    return { type: 'reply', run: this._run, id, ok: true, value: tokens }
  }
}
