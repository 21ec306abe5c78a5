/**
 * Holds: a binding call waiting for a decision taken outside the run (`PtcBindingCall.hold`).
 * The run answers its caller at once with `result.paused`; its program waits in its environment
 * with the call pending. Three parts: the run's time budget, which a hold stops for an idle
 * program but not for a busy one (`Budget`); the registry of paused runs that `resume` answers
 * and `holdTimeoutMs` expires (`HeldRuns`); and a run's answers, which go to `run`'s caller
 * first and to each `resume`'s caller after (`RunAnswers`).
 */
import type { PtcHoldDecision, PtcJsonValue, PtcOutput, PtcRunResult } from '../seam/types.js'

/** How often, at most, a suspended budget reads how busy its environment was. */
const CHECK_FLOOR_MS = 1000

/**
 * A run's time budget. While the program runs it is wall-clock time. While a call is held it is
 * the time its environment is busy (`Environment.busyMs`): a program that waits for the decision
 * spends none of it, however long the hold lasts; a program that computes, spins or floods while
 * its call is held spends it as it would unheld, and times out. A suspended budget is checked
 * once per budget left (at most once a second), so an idle hold costs a /proc read or two a
 * budget, not a poll.
 */
export class Budget {
  private _timer: NodeJS.Timeout | undefined
  private _endsAt = 0
  /** While suspended: what was left when the suspension began, and the busy time then. */
  private _left = 0
  private _busyAt = 0
  private _suspended = false

  constructor(
    private readonly _ms: number | null,
    private readonly _busy: () => number,
    private readonly _expire: () => void,
  ) {}

  start(): void {
    if (this._ms !== null) this._arm(this._ms)
  }

  suspend(): void {
    if (this._ms === null || this._suspended) return
    this._suspended = true
    clearTimeout(this._timer)
    this._left = this._endsAt - performance.now()
    this._busyAt = this._busy()
    this._check()
  }

  resume(): void {
    if (!this._suspended) return
    this._suspended = false
    clearTimeout(this._timer)
    const left = this._left - (this._busy() - this._busyAt)
    if (left <= 0) return this._expire()
    this._arm(left)
  }

  stop(): void {
    clearTimeout(this._timer)
  }

  private _arm(ms: number): void {
    this._endsAt = performance.now() + ms
    this._timer = setTimeout(this._expire, ms)
  }

  private readonly _check = (): void => {
    const charged = this._busy() - this._busyAt
    if (charged >= this._left) return this._expire()
    this._timer = setTimeout(this._check, Math.max(this._left - charged, CHECK_FLOOR_MS))
  }
}

/** A held call as the run session raises it, one at a time, to whoever answers the run. */
export interface SessionPause {
  tool: string
  args?: PtcJsonValue
  payload: PtcJsonValue
  /** Output printed since the run's previous answer. */
  output: PtcOutput[]
  /** Answers the hold; the session goes on (and may raise its next hold). */
  decide(decision: PtcHoldDecision): void
  /** The hold went unanswered too long: the run fails with a `timeout` saying so. */
  expire(message: string): void
}

/**
 * Where one admitted run's answers go: to `run`'s caller, then to each `resume`'s caller. A
 * caller's signal stops the run while that caller waits for its answer (a paused run is then
 * stopped only by its hold's expiry, `release` or disposal, or the signal given to `resume`).
 */
export class RunAnswers {
  /** Aborting it ends the run; the session listens to its signal. */
  readonly abort = new AbortController()
  private _waiter: { resolve(result: PtcRunResult): void; reject(error: unknown): void } | undefined
  private _signal: AbortSignal | undefined
  /** The id of the hold raised last, when no caller waits. */
  private _held: string | undefined

  constructor(
    private readonly _registry: HeldRuns,
    /** Adds the run's sandbox facts to each answer. */
    private readonly _report: (result: PtcRunResult) => PtcRunResult,
  ) {}

  /** The next answer; `signal` stops the run until it arrives. */
  next(signal: AbortSignal | undefined): Promise<PtcRunResult> {
    return new Promise((resolve, reject) => {
      this._waiter = { resolve, reject }
      this._watch(signal)
    })
  }

  /** The run was refused as misuse (`run` rejects): the waiting caller is told. */
  refuse(error: unknown): void {
    const waiter = this._waiter
    this._waiter = undefined
    this._watch(undefined)
    waiter?.reject(error)
  }

  /** The session raised a hold: the waiting caller gets a paused answer. */
  pause(pause: SessionPause): void {
    this._held = this._registry.add(this, pause)
    this._answer({ output: pause.output, paused: { id: this._held, tool: pause.tool, ...(pause.args === undefined ? {} : { args: pause.args }), payload: pause.payload } })
  }

  /** The run ended: the waiting caller gets its result, or the pending `resume` of its hold. */
  finish(result: PtcRunResult): void {
    if (this._waiter) return this._answer(result)
    if (this._held !== undefined) this._registry.ended(this._held, this._report(result))
  }

  private _answer(result: PtcRunResult): void {
    const waiter = this._waiter
    this._waiter = undefined
    this._watch(undefined)
    waiter?.resolve(this._report(result))
  }

  private readonly _onAbort = () => this.abort.abort(this._signal?.reason)

  private _watch(signal: AbortSignal | undefined): void {
    this._signal?.removeEventListener('abort', this._onAbort)
    this._signal = signal
    if (!signal) return
    if (signal.aborted) return this._onAbort()
    signal.addEventListener('abort', this._onAbort, { once: true })
  }
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
    const id = `hold-${++this._next}-${Math.random().toString(36).slice(2, 10)}`
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

/** The text a refused hold rejects with. */
export function refusalMessage(tool: string, decision: { reason?: string }): string {
  return decision.reason ?? `the call ${tool} was refused`
}
