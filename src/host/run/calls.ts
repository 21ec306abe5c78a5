/**
 * The host side of binding calls for one run: checks each call against the declared
 * namespaces (own properties only, so `__proto__` or `constructor` never reach a prototype),
 * re-validates arguments, enforces the run's call budgets (`maxCalls`, a member's `timeoutMs`,
 * `maxResultBytes` and `maxArgumentBytes`), invokes the host function with the run's ledger (what its
 * calls have cost the host, which a tool group's schema checks charge and are bounded by), validates
 * what it resolved and replies exactly once per call id. Replies stop when the run settles. Every call it sees goes into the
 * run's trace (`PtcRunResult.calls`), and into a span when OpenTelemetry is installed. In a
 * durable run, each call within `maxCalls` also goes through the run's journal (`journal.ts`),
 * which records its reply, or answers it from the record when the run is a replay.
 */
import { performance } from 'node:perf_hooks'
import { jsonByteLength, snapshotJson } from '../../json/index.js'
import { ARRIVED_BYTES, ARRIVED_VALUES } from '../connection/json-lines.js'
import { MAX_PENDING_VALUES, tooManyPendingCallsMessage, tooManyValuesMessage } from '../connection/frame-bounds.js'
import { type CallMessage, type RepliesMessage, type ReplyMessage, overBudgetCallMessage } from '../../protocol/messages.js'
import { PtcImage } from '../../seam/image.js'
import { PtcCallRefusal } from '../../seam/refusal.js'
import { releaseOf } from '../../seam/release-on-write.js'
import type {
  ImageAttachmentRef,
  PtcBindingCall,
  PtcBindingErrorReport,
  PtcBindingFunction,
  PtcBindingNamespace,
  PtcCallLimits,
  PtcCallOutcome,
  PtcCallRecord,
  PtcHoldDecision,
  PtcJsonValue,
  PtcRunLedger,
} from '../../seam/types.js'
import { CallTurns } from './call-turns.js'
import { foreignMessage } from './foreign-message.js'
import { type ResultBudget, convertResult, encodeResult, overBudget } from './json-conversion.js'
import { decidedHold } from './holds.js'
import type { CallJournal } from '../durable/journal.js'
import type { RecordedReply } from '../durable/record.js'
import type { CallTelemetry, RunTelemetry } from './telemetry.js'

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
  /** The run's environment, which the replies are sent to; `written` once it took one (a helper's socket flushed it). */
  environment: { send(message: ReplyMessage | RepliesMessage, written: () => void): void }
  /** The call broke the protocol; the run must fail with `protocol`. */
  violation(reason: string): void
  issued(attachment: ImageAttachmentRef): void
  /** A host function threw or resolved what the program cannot receive: tell the developer. */
  failed(report: PtcBindingErrorReport): void
  /** A host function holds call number `id` for a decision (`PtcBindingCall.hold`). */
  hold(tool: string, args: unknown, payload: unknown, id: number): Promise<PtcJsonValue | undefined>
  /**
   * The run cannot go on: a durable run's journal cannot (a replay's call is not the recorded
   * one, or the journal is over its budget), or the program keeps calling past `maxCalls`. It
   * fails with `exception`, saying why.
   */
  end(message: string): void
}

/** The call budgets of one run. */
export interface CallBudget {
  /** Calls in flight at once; more is a protocol violation (the worker holds this too). */
  maxPending: number
  /** JSON bytes of the arguments in flight; a call over it is refused. */
  maxPendingBytes: number
  /** Calls the run may start; later ones are refused. */
  maxCalls: number
  /** JSON bytes one call may resolve, unless its member's own limit is smaller. */
  maxResultBytes: number
}

/**
 * Calls past `maxCalls` are refused, this many: a program looping on refusals would otherwise
 * keep the host reading and refusing its calls for its whole time budget. The next ends the run.
 */
const REFUSED_PAST_BUDGET = 100

/**
 * What a call in flight holds of the run's budget for arguments: their JSON bytes
 * (`maxPendingBytes`) and their values (MAX_PENDING_VALUES). It travels with the
 * call to its reply, and is given back when the reply has been written.
 */
interface Charge {
  readonly bytes: number
  readonly values: number
}

/** The charge of a reply whose call holds nothing: a refused or replayed one. */
const NO_CHARGE: Charge = { bytes: 0, values: 0 }

/** A call's record while it runs. */
interface TraceEntry {
  record: PtcCallRecord
  started: number
  finished: boolean
  /** It ran past its member's `timeoutMs`. */
  timedOut: boolean
  span: CallTelemetry | undefined
}

export class CallDispatcher {
  private _nextId = 1
  private _pending = 0
  /** JSON bytes, and values, of the arguments of the calls in flight: their charges in all. */
  private _pendingBytes = 0
  private _pendingValues = 0
  private _open = true
  /** Aborts `call.signal` of every call in flight when the run settles; made at the first call (a run without calls pays nothing for it). */
  private _controller: AbortController | undefined
  /**
   * Replies ready in this tick, sent together once the tick's microtasks have run, with the
   * charges of their calls: a call counts as pending until its reply has been written,
   * so a program that stops reading its replies cannot make the host buffer them without bound.
   */
  private _outbox: Array<{ reply: ReplyMessage; charge: Charge; release: (() => void) | undefined }> = []
  /**
   * What the host holds for replies handed to the environment and not yet written
   * (`RELEASE_ON_WRITE`): given back as each is written, or all at once when the run closes,
   * since an environment that died never writes them.
   */
  private readonly _unwritten = new Set<() => void>()
  /** Every call this run started, in start order. */
  private readonly _trace: TraceEntry[] = []
  /** Made as the program is sent: call offsets count from here. */
  private readonly _origin = performance.now()
  /** What this run's calls have cost the host's thread, handed to each (a tool group's schema checks charge it). */
  private readonly _ledger: PtcRunLedger = { schemaCheckMs: 0 }
  /** The tools' invocations, started within a slice of each turn of the host's thread. */
  private readonly _turns = new CallTurns()

  constructor(
    private readonly _run: number,
    private readonly _bindings: readonly PtcBindingNamespace[],
    private readonly _budget: CallBudget,
    private readonly _host: CallHost,
    private readonly _telemetry?: RunTelemetry,
    private readonly _journal?: CallJournal,
  ) {}

  /**
   * Stops replying and aborts `call.signal` for every in-flight host function. The calls still
   * running are recorded as `aborted`, with `reason` (why they will never be answered).
   */
  close(reason = 'the run ended before this call settled'): void {
    this._open = false
    this._turns.close()
    for (const release of this._unwritten) release()
    this._unwritten.clear()
    for (const entry of this._trace) if (!entry.finished) this._finish(entry, 'aborted', reason)
    this._controller?.abort(new Error('the run has settled'))
  }

  /** The records of every call, in start order. */
  trace(): PtcCallRecord[] {
    return this._trace.map((entry) => ({ ...entry.record }))
  }

  /** The records of the calls that have settled so far, for an answer given mid-run (a pause). */
  settled(): PtcCallRecord[] {
    return this._trace.filter((entry) => entry.finished).map((entry) => ({ ...entry.record }))
  }

  dispatch(call: CallMessage): void {
    if (call.id !== this._nextId) return this._host.violation(`binding call id ${call.id} is out of sequence`)
    this._nextId++
    if (++this._pending > this._budget.maxPending) {
      return this._host.violation(tooManyPendingCallsMessage(this._budget.maxPending))
    }
    const { maxCalls, maxPendingBytes } = this._budget
    // Ended before it is recorded: the trace holds at most maxCalls + REFUSED_PAST_BUDGET calls.
    if (call.id > maxCalls + REFUSED_PAST_BUDGET) {
      return this._host.end(`the program made ${REFUSED_PAST_BUDGET} more calls after its ${maxCalls} calls (maxCalls) were used up and each was refused, so the run was ended; do more per call or finish the work in another run`)
    }
    const label = `${call.global}.${call.name}`
    const entry = this._start(label)
    const namespace = this._bindings.find((candidate) => candidate.global === call.global)
    const fn = namespace && hasOwn(namespace.functions, call.name) ? namespace.functions[call.name] : undefined
    if (typeof fn !== 'function') {
      this._finish(entry, 'refused', 'an undeclared binding')
      return this._host.violation(`a call to the undeclared binding ${label}`)
    }
    // Read as lossless JSON, within the frame's bounds, as it arrived (json-lines.ts).
    const args = call.args
    // Counted as the arguments arrived (json-lines.ts): a large value is not walked again here.
    const bytes = args === undefined ? 0 : (ARRIVED_BYTES.get(args as object) ?? jsonByteLength(args))
    entry.record.argumentBytes = bytes
    let decisions: PtcHoldDecision[] = []
    if (this._journal && call.id <= maxCalls) {
      const step = this._journal.call(call.id, label, args as PtcJsonValue | undefined, bytes)
      if (step.kind === 'fail') {
        this._finish(entry, 'refused', step.message)
        return this._host.end(step.message)
      }
      if (step.kind === 'replay') return this._replay(call.id, entry, step.reply)
      decisions = step.decisions
    }
    if (call.id > maxCalls) {
      const message = `${label}: this run has made its ${maxCalls} calls (maxCalls); do more per call or finish the work in another run`
      return this._refuse(call.id, entry, message)
    }
    const limits = namespace!.limits && hasOwn(namespace!.limits, call.name) ? namespace!.limits[call.name] : undefined
    if (limits?.maxArgumentBytes !== undefined && bytes > limits.maxArgumentBytes) {
      return this._refuse(call.id, entry, `${label}: its argument is ${bytes} JSON bytes, over the tool's maxArgumentBytes of ${limits.maxArgumentBytes}; pass less per call`)
    }
    // Arguments the host holds for tools are bounded: over budget, the call fails in the
    // program and its arguments are dropped here, never passed on or kept.
    if (this._pendingBytes + bytes > maxPendingBytes) return this._refuse(call.id, entry, overBudgetCallMessage(label, bytes, maxPendingBytes))
    // A list or an object of arguments was counted as it arrived; a string or a number is one value.
    const values = args === undefined ? 0 : typeof args === 'object' && args !== null ? (ARRIVED_VALUES.get(args) ?? 0) : 1
    if (this._pendingValues + values > MAX_PENDING_VALUES) return this._refuse(call.id, entry, tooManyValuesMessage(label, values))
    const charge: Charge = { bytes, values }
    this._pendingBytes += bytes
    this._pendingValues += values
    this._turns.run(() => void this._invoke(call, fn, args, charge, entry, limits, decisions, namespace!.convertResults === true))
  }

  /** Answers call `id` with the reply a durable run's record gave it: its tool does not run again. */
  private _replay(id: number, entry: TraceEntry, recorded: RecordedReply): void {
    if (!recorded.ok) {
      this._finish(entry, recorded.outcome, recorded.message)
      return this._queue({ type: 'reply', run: this._run, id, ok: false, message: recorded.message }, NO_CHARGE)
    }
    // The images among the value are issued again, to this environment.
    for (const token of recorded.value) {
      if (typeof token !== 'object' || token === null || (token as { kind?: unknown }).kind !== 'leaf') continue
      const { path, ...attachment } = (token as { fields: Record<string, unknown> }).fields
      this._host.issued(attachment as unknown as ImageAttachmentRef)
    }
    this._finish(entry, 'ok', undefined, recorded.resultBytes)
    this._queue({ type: 'reply', run: this._run, id, ok: true, value: recorded.value }, NO_CHARGE)
  }

  /** A durable run's journal records the reply call `id` got; one it cannot keep fails the run. */
  private _record(id: number, reply: ReplyMessage, entry: TraceEntry): void {
    if (!this._journal || id > this._budget.maxCalls) return
    const over = this._journal.settled(id, reply, entry.record.outcome, entry.record.resultBytes)
    if (over !== undefined) this._host.end(over)
  }

  private async _invoke(call: CallMessage, fn: PtcBindingFunction, args: unknown, charge: Charge, entry: TraceEntry, limits: PtcCallLimits | undefined, decisions: PtcHoldDecision[], convert: boolean): Promise<void> {
    const label = `${call.global}.${call.name}`
    let reply: ReplyMessage
    let release: (() => void) | undefined
    let inFlight = true
    const hold = (payload: PtcJsonValue) => {
      if (!inFlight) return Promise.reject(new Error(`${label} has settled; only a call in flight can be held`))
      // A durable replay answers the call's first holds with the decisions already taken.
      const decided = decisions.shift()
      return decided ? decidedHold(label, decided) : this._host.hold(label, args, payload, call.id)
    }
    try {
      const budget = resultBudget(limits?.maxResultBytes, this._budget.maxResultBytes)
      const value = await this._call(fn, args, charge.bytes, label, entry, limits?.timeoutMs, hold, budget.bytes)
      release = releaseOf(value)
      reply = this._resolution(call.id, label, value, entry, budget, convert)
      if (!reply.ok && this._open) this._host.failed({ binding: label, kind: 'invalid-value', message: reply.message, cause: value })
    } catch (error) {
      const message = foreignMessage(error, 'the tool rejected with')
      reply = { type: 'reply', run: this._run, id: call.id, ok: false, message }
      const refused = PtcCallRefusal.is(error)
      if (this._open && !refused) this._host.failed({ binding: label, kind: 'threw', message, cause: error })
      this._finish(entry, entry.timedOut ? 'timeout' : refused ? 'refused' : 'error', message)
    }
    inFlight = false
    this._record(call.id, reply, entry)
    this._queue(reply, charge, release)
  }

  /**
   * Runs the host function inside its call's span; with a time budget, the call rejects when it
   * runs out, and the function's signal aborts (it may still finish: its result is dropped).
   */
  private _call(fn: PtcBindingFunction, args: unknown, argumentBytes: number, label: string, entry: TraceEntry, timeoutMs: number | undefined, hold: PtcBindingCall['hold'], maxResultBytes: number): Promise<unknown> {
    const ledger = this._ledger
    const invoke = (signal: AbortSignal, held: PtcBindingCall['hold']) => {
      const context = { signal, hold: held, argumentBytes, ledger, maxResultBytes }
      return entry.span ? entry.span.within(() => fn(args, context)) : fn(args, context)
    }
    const controller = (this._controller ??= new AbortController())
    if (timeoutMs === undefined) return invoke(controller.signal, hold)
    const own = new AbortController()
    return new Promise((resolve, reject) => {
      // The tool's time budget runs while the tool works, not while a person decides on its hold.
      let left = timeoutMs
      let since = 0
      let timer: NodeJS.Timeout | undefined
      let settled = false
      const start = () => {
        if (settled) return
        since = performance.now()
        timer = setTimeout(() => {
          entry.timedOut = true
          const error = new Error(`${label} did not finish within its time budget of ${timeoutMs} ms (timeoutMs)`)
          own.abort(error)
          reject(error)
        }, left)
      }
      const stop = () => {
        clearTimeout(timer)
        left -= performance.now() - since
      }
      const timedHold: PtcBindingCall['hold'] = (payload) => {
        if (entry.timedOut) return hold(payload) // refused there: the call has settled
        stop()
        const decided = hold(payload)
        decided.then(start, start)
        return decided
      }
      const settle = <T>(then: (value: T) => void) => (value: T) => {
        settled = true
        clearTimeout(timer)
        then(value)
      }
      start()
      try {
        // A binding function of the caller's own may answer synchronously.
        Promise.resolve(invoke(AbortSignal.any([controller.signal, own.signal]), timedHold)).then((value) => {
          // Past its time budget the value is dropped, and what it holds with it.
          if (entry.timedOut) releaseOf(value)?.()
          settle(resolve)(value)
        }, settle(reject))
      } catch (error) {
        settle(reject)(error)
      }
    })
  }


  /** A record for a call that just arrived. */
  private _start(tool: string): TraceEntry {
    const started = performance.now()
    const record: PtcCallRecord = { tool, startMs: round(started - this._origin), durationMs: 0, outcome: 'ok', argumentBytes: 0 }
    const entry: TraceEntry = { record, started, finished: false, timedOut: false, span: this._telemetry?.call(tool) }
    this._trace.push(entry)
    return entry
  }

  private _finish(entry: TraceEntry, outcome: PtcCallOutcome, error?: string, resultBytes?: number): void {
    if (entry.finished) return
    entry.finished = true
    const { record } = entry
    record.durationMs = round(performance.now() - entry.started)
    record.outcome = outcome
    if (error !== undefined) record.error = error
    if (resultBytes !== undefined) record.resultBytes = resultBytes
    entry.span?.end(record)
  }

  private _refuse(id: number, entry: TraceEntry, message: string): void {
    this._finish(entry, 'refused', message)
    const reply: ReplyMessage = { type: 'reply', run: this._run, id, ok: false, message }
    this._record(id, reply, entry)
    this._queue(reply, NO_CHARGE)
  }

  /**
   * Sends `reply` with the next batch. Its call's `charge` is given back once the reply has been
   * written; a reply dropped because the run closed keeps it, since the dispatcher and its
   * counts end with the run.
   */
  private _queue(reply: ReplyMessage, charge: Charge, release?: () => void): void {
    if (!this._open) return release?.()
    this._outbox.push({ reply, charge, release })
    if (this._outbox.length === 1) queueMicrotask(() => this._flush())
  }

  private _flush(): void {
    const entries = this._outbox
    this._outbox = []
    if (!this._open) {
      for (const { release } of entries) release?.()
      return
    }
    const releases = entries.flatMap(({ release }) => (release ? [release] : []))
    for (const release of releases) this._unwritten.add(release)
    const replies = entries.map((entry) => entry.reply)
    this._host.environment.send(replies.length === 1 ? replies[0]! : { type: 'replies', run: this._run, replies }, () => {
      this._pending -= entries.length
      for (const { charge } of entries) {
        this._pendingBytes -= charge.bytes
        this._pendingValues -= charge.values
      }
      for (const release of releases) if (this._unwritten.delete(release)) release()
    })
  }

  private _resolution(id: number, label: string, value: unknown, entry: TraceEntry, budget: ResultBudget, convert: boolean): ReplyMessage {
    let resultBytes: number | undefined
    const fail = (message: string): ReplyMessage => {
      this._finish(entry, 'error', message, resultBytes)
      return { type: 'reply', run: this._run, id, ok: false, message }
    }
    let badImage: string | undefined
    const images = new Map<object, Record<string, string | number>>()
    const keep = (candidate: object) => {
      if (!(candidate instanceof PtcImage)) return undefined
      const attachment = checkImage(candidate)
      if (typeof attachment === 'string') {
        badImage ??= attachment
        return candidate
      }
      images.set(candidate, { path: candidate.path, ...attachment })
      this._host.issued(attachment)
      return candidate
    }
    let result: PtcJsonValue
    if (convert) {
      // As JSON.stringify would, bounded by the budget, into a fresh copy of lossless JSON
      // (json-conversion.ts refuses what the lossless check would): only its images are left to check.
      const converted = convertResult(label, value, budget, PtcImage)
      if (typeof converted === 'string') return fail(converted)
      if (converted.value === undefined) {
        this._finish(entry, 'ok', undefined, 0)
        return { type: 'reply', run: this._run, id, ok: true, value: [] }
      }
      for (const leaf of converted.leaves) keep(leaf)
      if (badImage !== undefined) return fail(`${label} resolved an invalid PtcImage: ${badImage}`)
      result = converted.value as PtcJsonValue
    } else {
      if (value === undefined) return fail(`${label} resolved undefined; tools must resolve JSON values (use null for nothing)`)
      const snapshot = snapshotJson(value, { leaf: keep })
      if (badImage !== undefined) return fail(`${label} resolved an invalid PtcImage: ${badImage}`)
      if (!snapshot.ok) return fail(`${label} resolved a value that is not lossless JSON (${snapshot.reason})`)
      result = snapshot.value
    }
    // An image counts as its path and attachment, what the program receives for it.
    const encoded = encodeResult(result, (leaf) => images.get(leaf)!, budget.bytes)
    resultBytes = encoded.bytes
    const tokens = encoded.tokens
    if (tokens === undefined) return fail(overBudget(label, String(resultBytes), budget))
    this._finish(entry, 'ok', undefined, resultBytes)
    return { type: 'reply', run: this._run, id, ok: true, value: tokens }
  }
}

/** The smaller of a tool's own `maxResultBytes` and the runtime's `maxCallResultBytes`; the tool's wins a tie. */
function resultBudget(tool: number | undefined, runtime: number): ResultBudget {
  return tool !== undefined && tool <= runtime
    ? { bytes: tool, field: "the tool's maxResultBytes" }
    : { bytes: runtime, field: "maxCallResultBytes in the runtime's configuration" }
}

/** Trace times are kept to a tenth of a millisecond. */
function round(ms: number): number {
  return Math.round(ms * 10) / 10
}
