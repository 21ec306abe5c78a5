/**
 * An admitted run, from its spec to its answers: the plan its session follows, its environment
 * (a fresh one from the pool, or its state owner's through the owners' queues), its session, and
 * where its answers go (`RunAnswers`: to `run`'s caller first, then to each `resume`'s). The
 * provider admits a run; this carries it out in one pass, without stepping back into the provider
 * or coming back here between the steps.
 */
import type { PtcRunFailure, PtcRunResult, PtcRunSpec, SandboxExecutionPolicy } from '../../seam/types.js'
import { ProgramSyntaxError } from '../../transform/index.js'
import type { WorkerPtcRuntimeConfig } from '../config.js'
import type { CallJournal } from '../durable/journal.js'
import { ByteBudget } from '../egress/byte-budget.js'
import { egressNamespace } from '../egress/broker.js'
import { EnvironmentHistory, historyOf } from '../environments/environment.js'
import type { EnvironmentKey, EnvironmentSource } from '../environments/pool.js'
import type { EnvironmentInitializer } from '../initializer.js'
import { type AdmittedPolicy, unavailableMessage } from '../sandbox/confinement.js'
import type { RunPolicy } from '../sandbox/policy.js'
import { abortMessage } from './foreign-message.js'
import { type HeldRuns, RunAnswers } from './holds.js'
import { OutputLedger } from './output-ledger.js'
import { OwnerQueues } from './owners.js'
import { type ProgramCache, declaredBy, overlongProgram } from './programs.js'
import { type RunPlan, type Settlement, runSession } from './session.js'
import { runTelemetry } from './telemetry.js'

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

export class RunDispatch {
  /** Where environments come from: the pool, made as the runtime starts. */
  source: EnvironmentSource<PolicyKey> | undefined
  /** One environment per state owner, and each owner's runs in order. */
  readonly owners: OwnerQueues<PolicyKey>
  private readonly _live = new Set<LiveRun>()
  /** Bytes of fetch responses the egress broker holds at once for every environment together. */
  private readonly _fetchBytes: ByteBudget
  /** Starts a run's span, where OpenTelemetry is installed (looked up once). */
  private readonly _telemetry = runTelemetry()

  constructor(private readonly _setting: DispatchSetting) {
    const { config } = _setting
    this._fetchBytes = new ByteBudget(config.maxHostFetchBytesInFlight, 'maxHostFetchBytesInFlight')
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
      const initializer = this._setting.initializer.lowered
      let program
      try {
        // A one-shot run's environment is fresh, and the program is lowered for it here, once: a
        // scoped-repl program sees what the initializer, which runs first, declared. An owner's
        // is lowered again for what its environment carries.
        program = programs.lower(spec.program, retained ? [] : (initializer?.declared ?? []), language)
      } catch (error) {
        if (error instanceof ProgramSyntaxError) return answers.finish(failure(limit, 'exception', error.message))
        throw error
      }
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
        return answers.finish(await this.owners.run(spec.stateOwner!, key, async (environment, notice, ownerSignal) => {
          const history = historyOf(environment)
          const lowered = programs.lowerFor(spec.program, language, history, initializer)
          const declared = declaredBy(history, lowered, initializer)
          const settlement = await runSession(environment, history, { ...plan, program: lowered, signal: ownerSignal, ...(notice ? { notice } : {}) })
          if (settlement.disposition === 'keep') for (const name of declared) history.carried.add(name)
          return settlement
        }, signal))
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
      this._live.delete(live)
    }
  }
}
