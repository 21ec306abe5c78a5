/**
 * Holds: a binding call waiting for a decision taken outside the run (`PtcBindingCall.hold`).
 * The run answers its caller at once with `result.paused`; its program waits in its environment
 * with the call pending. Two parts here: a run's queue of held calls, raised one at a time
 * (`HoldQueue`, in the run session); and the registry of paused runs that `resume` answers and
 * `holdTimeoutMs` expires (`HeldRuns`). A run's answers, which go to `run`'s caller first and to
 * each `resume`'s caller after, are its dispatch's (`RunAnswers`, dispatch.ts). While a call is
 * held, the run's budget is charged with busy time only (`time-budget.ts`).
 */
import { randomUUID } from 'node:crypto'
import { snapshotJson } from '../../json/index.js'
import type { PtcCallRecord, PtcHoldDecision, PtcJsonValue, PtcOutput, PtcRunResult } from '../../seam/types.js'
import type { RunAnswers } from './dispatch.js'
import type { TimeBudget } from './time-budget.js'

/** A held call as the run session raises it, one at a time, to whoever answers the run. */
export interface SessionPause {
  tool: string
  /** The held call's number in the run (from 1), which a durable token names. */
  call: number
  args?: PtcJsonValue
  payload: PtcJsonValue
  /** Output printed since the run's previous answer. */
  output: PtcOutput[]
  /** The run's calls that have settled so far (the held one has not). */
  calls: PtcCallRecord[]
  /** Answers the hold; the session goes on (and may raise its next hold). */
  decide(decision: PtcHoldDecision): void
  /** The hold went unanswered too long: the run fails with a `timeout` saying so. */
  expire(message: string): void
  /** The hold cannot be taken (a durable run that cannot be sealed): the run fails with an `exception`. */
  refuse(message: string): void
}

/** What a refused hold rejects with. */
export function holdRefusal(tool: string, reason: string | undefined): Error {
  return new Error(reason ?? `the call ${tool} was refused`)
}

/** What a held call's hold settles with once `decision` answers it (a durable replay's decision). */
export function decidedHold(tool: string, decision: PtcHoldDecision): Promise<PtcJsonValue | undefined> {
  return decision.approve ? Promise.resolve(decision.value) : Promise.reject(holdRefusal(tool, decision.reason))
}

interface HeldRun {
  answers: RunAnswers
  pause: SessionPause
  /** Set when the run ended while held: `resume` answers with it. */
  result?: PtcRunResult
  expiry: NodeJS.Timeout
}

/** Every held call of one runtime, by id, until it is answered or expires. */
export class HeldRuns {
  private readonly _held = new Map<string, HeldRun>()
  private _next = 0

  constructor(private readonly _holdTimeoutMs: number) {}

  /**
   * Registers a raised hold. After `holdTimeoutMs` unanswered, its run fails with a `timeout`
   * naming it; a run that ended while held (expired or not) keeps its result for `resume` until
   * `holdTimeoutMs` after that, then the id is forgotten, so no result is kept for ever.
   */
  add(answers: RunAnswers, pause: SessionPause): string {
    const id = `hold-${++this._next}-${randomUUID()}`
    const held: HeldRun = { answers, pause, expiry: this._timer(() => {
      if (held.result) return void this._held.delete(id)
      held.expiry = this._timer(() => this._held.delete(id))
      pause.expire(`the call ${pause.tool} was held for a decision for longer than ${this._holdTimeoutMs} ms (holdTimeoutMs)`)
    }) }
    this._held.set(id, held)
    return id
  }

  private _timer(expire: () => void): NodeJS.Timeout {
    const timer = setTimeout(expire, this._holdTimeoutMs)
    // A held run keeps its environment (and so the host) alive; the expiry alone need not.
    timer.unref()
    return timer
  }

  /** The run of a hold no caller has answered ended on its own: keep its result for `resume`. */
  ended(id: string, result: PtcRunResult): void {
    const held = this._held.get(id)
    if (held) held.result = result
  }

  /**
   * Answers hold `id` and resolves with the run's next answer. Throws on an id that is not held
   * (never issued, already answered, or expired).
   */
  resume(id: string, decision: PtcHoldDecision, signal: AbortSignal | undefined): Promise<PtcRunResult> {
    const held = this._held.get(id)
    if (!held) throw new Error(`no call is held under the id ${JSON.stringify(id)}: it was already answered, it was forgotten after holdTimeoutMs, or it was never issued`)
    this._held.delete(id)
    clearTimeout(held.expiry)
    if (held.result) return Promise.resolve(held.result)
    const next = held.answers.next(signal)
    held.pause.decide(decision)
    return next
  }

  /** Forgets every hold (runtime disposal ends their runs). */
  clear(): void {
    for (const held of this._held.values()) clearTimeout(held.expiry)
    this._held.clear()
  }
}

/** A held call, waiting in its run's queue until it is raised and decided. */
interface Hold {
  tool: string
  call: number
  args?: PtcJsonValue
  payload: PtcJsonValue
  resolve(value: PtcJsonValue | undefined): void
  reject(error: Error): void
}

/** What a run session gives its queue of holds. */
export interface HoldHooks {
  budget: TimeBudget
  /** Raises a held call to whoever answers the run. */
  pause(pause: SessionPause): void
  /** The output printed since the run's previous answer. */
  takeOutput(): PtcOutput[]
  /** The run's calls that have settled so far. */
  settledCalls(): PtcCallRecord[]
  /** Fails the run with a `timeout` carrying `message`. */
  expire(message: string): void
  /** Fails the run with an `exception` carrying `message`. */
  refuse(message: string): void
}

/**
 * One run's held calls, in order: the first is raised, the rest wait until it is decided, so
 * each pause has one id and one answer. The budget stays suspended from the first raise until
 * no hold is left.
 */
export class HoldQueue {
  private readonly _holds: Hold[] = []
  private _closed = false

  constructor(private readonly _hooks: HoldHooks) {}

  /** `PtcBindingCall.hold` for call number `call`, to `tool` with `args`. */
  hold(tool: string, args: unknown, payload: unknown, call: number): Promise<PtcJsonValue | undefined> {
    if (this._closed) return Promise.reject(new Error(`${tool} cannot be held: the run has ended`))
    const snapshot = snapshotJson(payload)
    if (!snapshot.ok) return Promise.reject(new TypeError(`${tool}: a hold's payload must be lossless JSON (${snapshot.reason})`))
    // A copy: what the person approves cannot change when the host function changes its own.
    const copy = args === undefined ? undefined : snapshotJson(args)
    const held = new Promise<PtcJsonValue | undefined>((resolve, reject) => {
      this._holds.push({ tool, call, ...(copy?.ok ? { args: copy.value } : {}), payload: snapshot.value, resolve, reject })
    })
    // A host function that drops its hold must not end the host with an unhandled rejection.
    held.catch(() => undefined)
    if (this._holds.length === 1) this._raise()
    return held
  }

  /** The run ended: every hold rejects, and none is raised again. */
  close(): void {
    this._closed = true
    for (const held of this._holds.splice(0)) held.reject(new Error(`${held.tool} was held when the run ended`))
  }

  private _raise(): void {
    const head = this._holds[0]!
    this._hooks.budget.suspend() // may expire the run, which closes the queue
    if (this._closed) return
    try {
      this._hooks.pause({
        tool: head.tool,
        call: head.call,
        ...(head.args === undefined ? {} : { args: head.args }),
        payload: head.payload,
        output: this._hooks.takeOutput(),
        calls: this._hooks.settledCalls(),
        decide: (decision) => this._decide(head, decision),
        expire: (message) => this._hooks.expire(message),
        refuse: (message) => this._hooks.refuse(message),
      })
    } catch (error) {
      // The budget is suspended and nothing answers this hold: the run must end now, not never.
      this._hooks.refuse(`${head.tool} could not be held: ${error instanceof Error ? error.message : String(error)}`)
    }
  }

  private _decide(head: Hold, decision: PtcHoldDecision): void {
    if (this._closed || this._holds[0] !== head) return
    this._holds.shift()
    if (decision.approve) head.resolve(decision.value)
    else head.reject(holdRefusal(head.tool, decision.reason))
    if (this._holds.length > 0) this._raise()
    else this._hooks.budget.resume()
  }
}
