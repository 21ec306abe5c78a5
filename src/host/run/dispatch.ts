/**
 * An admitted run, from its spec to its answers: the plan its session follows, its environment
 * (a fresh one from the pool, or its state owner's through the owners' queues), its session, and
 * where its answers go (`RunAnswers`, here: to `run`'s caller first, then to each `resume`'s). The
 * provider admits a run; this carries it out in one pass, without stepping back into the provider
 * or coming back here between the steps.
 */
import type { PtcRunFailure, PtcRunResult, PtcRunSpec, SandboxExecutionPolicy } from '../../seam/types.js'
import { ProgramSyntaxError, overlongProgram } from '../../transform/index.js'
import type { WorkerPtcRuntimeConfig } from '../config.js'
import type { CallJournal } from '../durable/journal.js'
import { ByteBudget } from '../egress/byte-budget.js'
import { egressNamespace } from '../egress/broker.js'
import { HostByteBudget } from '../egress/host-budget.js'
import { EnvironmentHistory, historyOf } from '../environments/environment.js'
import type { EnvironmentKey, EnvironmentSource } from '../environments/pool.js'
import type { EnvironmentInitializer } from '../initializer.js'
import { type AdmittedPolicy, unavailableMessage } from '../sandbox/confinement.js'
import type { RunPolicy } from '../sandbox/policy.js'
import { abortMessage } from './foreign-message.js'
import type { HeldRuns, SessionPause } from './holds.js'
import { OutputLedger } from './output-ledger.js'
import { OwnerQueues } from './owners.js'
import { type ProgramCache, type ProgramText, declaredBy } from './programs.js'
import { type RunPlan, type Settlement, runSession } from './session.js'
import { runTelemetry } from './telemetry.js'
import { untilAborted } from './until-aborted.js'

/** What a run's environment must be: the sandbox policy it is spawned under, if any, named by `id` (a `RunPolicy` is one). */
export interface PolicyKey extends EnvironmentKey {
  readonly policy?: SandboxExecutionPolicy
}

/** The environment key of runs without a sandbox policy. */
export const UNCONFINED: PolicyKey = { id: '' }

/** What the runs of one runtime are carried out with. */
export interface DispatchSetting {
  readonly config: WorkerPtcRuntimeConfig & { cwd: string }
  readonly programs: ProgramCache
  readonly initializer: EnvironmentInitializer
  /** Runs paused on a held call, which `resume` answers. */
  readonly holds: HeldRuns
  /** The policy of a tier that confines by construction: what its runs report without one of their own. */
  readonly tierPolicy: RunPolicy | undefined
}

/** A run in progress: disposal and an unregistered initializer abort it and wait for it. */
interface LiveRun {
  answers?: RunAnswers
  first?: Promise<PtcRunResult>
  done?: Promise<void>
}

/** The result of a run that failed before it had an environment (or was aborted in a queue). */
function failure(maxOutputBytes: number, kind: PtcRunFailure['kind'], message: string): PtcRunResult {
  return new OutputLedger(maxOutputBytes).finish({ error: { kind, message } })
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
  /** A durable pause's token is being sealed: the run's end is not its answer. */
  private _sealing = false

  constructor(
    private readonly _registry: HeldRuns,
    /** The policy whose sandbox facts each answer carries (a run without a sandbox reports none). */
    private readonly _sandbox: Pick<RunPolicy, 'facts' | 'report'> | undefined,
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
    this._answer({ output: pause.output, calls: pause.calls, paused: { id: this._held, tool: pause.tool, ...(pause.args === undefined ? {} : { args: pause.args }), payload: pause.payload } })
  }

  /**
   * The session raised a hold of a durable run: the run ends at once (its environment with it,
   * so nothing the program does after the pause runs while the token is sealed), and the
   * waiting caller gets a paused answer carrying the token once it is sealed, or the run's
   * failure when it cannot be; `resume(token, …)` replays it.
   */
  pauseDurably(pause: SessionPause, token: Promise<string>): void {
    this._sealing = true
    const { output, calls } = pause
    void token.then(
      (sealed) => ({ output, calls, paused: { id: sealed, token: sealed, tool: pause.tool, ...(pause.args === undefined ? {} : { args: pause.args }), payload: pause.payload } }),
      (error: unknown) => ({ output, calls, error: { kind: 'exception' as const, message: (error as Error).message } }),
    ).then((answer) => {
      this._sealing = false
      this._answer(answer)
    })
    // After the hold's own bookkeeping: the abort settles the session, which closes the queue.
    queueMicrotask(() => this.abort.abort(new Error('the run paused durably: its environment ended; resume(token) runs it again')))
  }

  /** The run ended: the waiting caller gets its result, or the pending `resume` of its hold. */
  finish(result: PtcRunResult): void {
    if (this._sealing) return // ended by its durable pause: the caller gets the token
    if (this._waiter) return this._answer(result)
    if (this._held !== undefined) this._registry.ended(this._held, this._reported(result))
  }

  /** `result` with its sandbox facts: a clean result's are its policy's, worked out with it; a failure's depend on its message. */
  private _reported(result: PtcRunResult): PtcRunResult {
    const sandbox = this._sandbox
    if (sandbox === undefined) return result
    return result.error === undefined ? { ...result, sandbox: { ...sandbox.facts } } : sandbox.report(result)
  }

  private _answer(result: PtcRunResult): void {
    const waiter = this._waiter
    this._waiter = undefined
    this._watch(undefined)
    waiter?.resolve(this._reported(result))
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

export class RunDispatch {
  /** Where environments come from: the pool, made as the runtime starts. */
  source: EnvironmentSource<PolicyKey> | undefined
  /** One environment per state owner, and each owner's runs in order. */
  readonly owners: OwnerQueues<PolicyKey>
  private readonly _live = new Set<LiveRun>()
  /**
   * Per state owner, settles once its latest run (and every one before it) has entered the
   * owner's queue or ended: a TypeScript run waits for its erasure first, and a later run of the
   * same owner must not pass it.
   */
  private readonly _entries = new WeakMap<object, Promise<void>>()
  /** Bytes of fetch responses the egress broker holds at once for every environment together. */
  private readonly _fetchBytes: HostByteBudget
  /** Starts a run's span, where OpenTelemetry is installed (looked up once). */
  private readonly _telemetry = runTelemetry()

  constructor(private readonly _setting: DispatchSetting) {
    const { config } = _setting
    this._fetchBytes = new HostByteBudget(config.maxHostFetchBytesInFlight, 'maxHostFetchBytesInFlight')
    this.owners = new OwnerQueues(
      {
        take: (key, retry) => this.source!.take(key, 'retained', retry),
        settle: (environment, disposition) => this.source!.settle(environment, disposition),
        aborted: (message) => failure(config.maxOutputBytes, 'abort', message),
      },
      config.idleMs,
    )
  }

  /**
   * Runs an admitted `spec` under `policy` (resolved once, at admission); a durable run records
   * into (or replays) `journal`. Resolves with the run's first answer; rejects only on what the
   * run could not know at admission and the caller must fix.
   */
  admit(spec: PtcRunSpec, policy: AdmittedPolicy | undefined, journal: CallJournal | undefined): Promise<PtcRunResult> {
    const live: LiveRun = {}
    this._live.add(live)
    live.done = this._execute(spec, policy, journal, live)
    return live.first!
  }

  /** Aborts every admitted run with `reason`, ends every retained environment, and waits for the runs. */
  async drain(reason: string): Promise<void> {
    const live = [...this._live]
    for (const run of live) run.answers?.abort.abort(new Error(reason))
    await this.owners.releaseAll(reason)
    await Promise.allSettled(live.map((run) => run.done))
  }

  /**
   * The run itself, one function from its answers to its last one: each step is a call into the
   * file that owns it, and nothing comes back here in between. Its first answer is set
   * (`live.first`) before anything can end it.
   */
  private async _execute(spec: PtcRunSpec, policy: AdmittedPolicy | undefined, journal: CallJournal | undefined, live: LiveRun): Promise<void> {
    const { config, programs, holds } = this._setting
    // A run may answer more than once: paused on a held call, then after each resume.
    let turn: OwnerTurn | undefined
    const answers = (live.answers = new RunAnswers(holds, policy ?? this._setting.tierPolicy))
    live.first = answers.next(spec.signal)
    try {
      const { signal } = answers.abort
      const limit = config.maxOutputBytes
      if (signal.aborted) return answers.finish(failure(limit, 'abort', abortMessage(signal.reason)))
      // Never run unconfined what a policy says to confine.
      if (policy?.unavailable) return answers.finish(failure(limit, 'sandbox-unavailable', unavailableMessage(policy.unavailable)))
      const language = spec.language ?? config.language
      const tooLong = overlongProgram(spec.program, config.maxProgramBytes)
      if (tooLong) return answers.finish(failure(limit, 'exception', tooLong))
      const retained = spec.stateOwner !== undefined && config.retainState
      turn = retained ? this._ownerTurn(spec.stateOwner!) : undefined
      const initializer = this._setting.initializer.lowered
      let text: ProgramText
      let program
      // The eraser's thread serves every conversation in turn: a run waits for it within its time
      // budget, and stops waiting when it is aborted.
      const erasing = language !== 'typescript' ? undefined : spec.timeoutMs === null ? signal : AbortSignal.any([signal, AbortSignal.timeout(spec.timeoutMs)])
      try {
        // TypeScript's types are erased first, the host's loop going on while the eraser's thread
        // works; any other program is lowered in this same tick.
        text = erasing ? await programs.eraseTypes(spec.program, erasing) : { source: spec.program, language }
        // A one-shot run's environment is fresh, and the program is lowered for it here, once: a
        // scoped-repl program sees what the initializer, which runs first, declared. An owner's
        // is lowered again for what its environment carries.
        program = programs.lower(text, retained ? [] : (initializer?.declared ?? []))
      } catch (error) {
        if (signal.aborted) return answers.finish(failure(limit, 'abort', abortMessage(signal.reason)))
        if (erasing?.aborted) {
          return answers.finish(failure(limit, 'timeout', `the program did not finish within its time budget of ${spec.timeoutMs} ms (timeoutMs): it waited that long for the TypeScript eraser, busy with other programs`))
        }
        if (error instanceof ProgramSyntaxError) return answers.finish(failure(limit, 'exception', error.message))
        throw error
      }
      // The owner's runs enter its queue in the order they arrived.
      if (turn) await untilAborted(turn.previous, signal).catch(() => undefined)
      // Aborted while its types were erased, or while an earlier run was: it takes no environment.
      if (signal.aborted) return answers.finish(failure(limit, 'abort', abortMessage(signal.reason)))
      // The environments that may serve it: those of its policy (and, for Python, spawned for it:
      // a confined helper shows Pyodide's directory only when spawned after Python was needed).
      const key: PolicyKey = policy === undefined
        ? UNCONFINED
        : language === 'python' && config.language !== 'python' ? { id: `${policy.id}\u0000python`, policy: policy.policy } : policy
      const egress = policy?.egress
      const plan: RunPlan = {
        program,
        initializer,
        // An environment runs one run at a time, so the run's budget is its environment's.
        bindings: egress ? [...spec.bindings, egressNamespace(egress, { budgets: { environment: new ByteBudget(config.maxFetchBytesInFlight, 'maxFetchBytesInFlight'), host: this._fetchBytes } })] : spec.bindings,
        cwd: spec.cwd,
        timeoutMs: spec.timeoutMs,
        signal,
        discardCompletion: spec.discardCompletion === true,
        maxOutputBytes: limit,
        maxPendingCalls: config.maxPendingCalls,
        maxPendingCallBytes: config.maxPendingCallBytes,
        maxCalls: spec.maxCalls ?? config.maxCalls,
        maxCallResultBytes: config.maxCallResultBytes,
        oneShot: !retained,
        onBindingError: spec.onBindingError,
        pause: (pause) => {
          if (!journal) return answers.pause(pause)
          // A durable run answers with a token and ends; its environment is not held.
          const sealed = journal.seal(pause)
          if (sealed.ok) answers.pauseDurably(pause, sealed.token)
          else pause.refuse(sealed.message)
        },
        ...(this._telemetry ? { telemetry: this._telemetry } : {}),
        ...(journal ? { journal } : {}),
      }
      if (retained) {
        const running = this.owners.run(spec.stateOwner!, key, async (environment, notice, ownerSignal) => {
          const history = historyOf(environment)
          const lowered = programs.lowerFor(text, history, initializer)
          const declared = declaredBy(history, lowered, initializer)
          const settlement = await runSession(environment, history, { ...plan, program: lowered, signal: ownerSignal, ...(notice ? { notice } : {}) })
          if (settlement.disposition === 'keep') for (const name of declared) history.carried.add(name)
          return settlement
        }, signal)
        // In the owner's queue now (it joins as it is called): the owner's next run may follow.
        turn!.entered()
        return answers.finish(await running)
      }
      const source = this.source!
      let environment = source.take(key, 'one-shot')
      let settlement: Settlement = await runSession(environment, new EnvironmentHistory(), plan)
      if (settlement.unstarted && !signal.aborted) {
        // Its environment died before the program started (a pooled helper killed while idle):
        // nothing ran, so it runs once more in a fresh one.
        await source.settle(environment, settlement.disposition)
        environment = source.take(key, 'one-shot', true)
        settlement = await runSession(environment, new EnvironmentHistory(), plan)
      }
      await source.settle(environment, settlement.disposition)
      answers.finish(settlement.result)
    } catch (error) {
      answers.refuse(error)
    } finally {
      turn?.entered()
      this._live.delete(live)
    }
  }

  /** This run's place among its owner's: after the runs before it entered the owner's queue. */
  private _ownerTurn(owner: object): OwnerTurn {
    const previous = this._entries.get(owner) ?? Promise.resolve()
    let entered!: () => void
    const own = new Promise<void>((resolve) => (entered = resolve))
    // The next run waits for this one and, should this one end early, for those before it too.
    this._entries.set(owner, previous.then(() => own))
    return { previous, entered }
  }
}

/** A retained run's place in its owner's arrival order (`RunDispatch._ownerTurn`). */
interface OwnerTurn {
  /** Settles once the owner's earlier runs entered its queue or ended. */
  previous: Promise<void>
  /** This run entered the owner's queue, or ended without. */
  entered(): void
}
