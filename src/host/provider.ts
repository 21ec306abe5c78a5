/**
 * `WorkerPtcRuntime`: the public provider. One run reads top-down here: admission (the spec is
 * checked and its policy resolved), environment (the owner's queue or the source), execution
 * and settlement (`runSession`), result (with the sandbox facts). Disposal aborts every run
 * with "runtime disposed" and awaits every environment.
 */
import type { Context } from 'cordis'
import { PtcRuntime } from '../seam/runtime.js'
import type {
  PtcHoldDecision,
  PtcProgramFormat,
  PtcProgramLanguage,
  PtcResumeOptions,
  PtcRunFailure,
  PtcRunRequest,
  PtcRunResult,
  PtcRunSpec,
  SandboxExecutionPolicy,
  SandboxMode,
} from '../seam/types.js'
import { ProgramSyntaxError } from '../transform/index.js'
import { type Environment, type EnvironmentHistory, historyOf } from './environments/environment.js'
import { Admission, NAME, checkDecision, checkStateOwner } from './admission.js'
import { Config, type WorkerPtcRuntimeConfig, checkConfig } from './config.js'
import { ByteBudget } from './egress/byte-budget.js'
import { egressNamespace } from './egress/broker.js'
import { abortMessage } from './run/foreign-message.js'
import { HeldRuns, RunAnswers } from './run/holds.js'
import { EnvironmentInitializer } from './initializer.js'
import { executionInstructions } from './instructions.js'
import { OutputLedger } from './run/output-ledger.js'
import { OwnerQueues } from './run/owners.js'
import { ProgramCache, declaredBy, overlongProgram } from './run/programs.js'
import { type AdmittedPolicy, DEFAULT_SANDBOX, Sandbox, startFailureMessage, unavailableMessage } from './sandbox/confinement.js'
import { type RunPolicy, runPolicy } from './sandbox/policy.js'
import { type RunPlan, runSession } from './run/session.js'
import { type EnvironmentKey, EnvironmentSource } from './environments/pool.js'
import { type Tier, tierOf } from './environments/tiers.js'
import { typeEraser } from './run/typescript-eraser.js'
import { pythonRuntime } from '../python/runtime.js'
import { pythonSnapshot } from '../python/snapshot.js'
import { isDurableToken } from './durable/record.js'
import { DurableTokens } from './durable/tokens.js'
import type { CallJournal } from './durable/journal.js'

/** What a run's environment must be: the sandbox policy it is spawned under, if any, named by `id`. */
interface PolicyKey extends EnvironmentKey {
  readonly policy?: SandboxExecutionPolicy
}

/** The environment key of runs without a sandbox policy. */
const UNCONFINED: PolicyKey = { id: '' }

/**
 * Runs each program in a fresh Node worker (or the state owner's retained one), hosted in a
 * helper process of its own by default, with host bindings proxied over a private channel.
 * Register with `ctx.plugin(WorkerPtcRuntime, config)`; consumers reach it as `ctx.ptcRuntime`.
 */
export class WorkerPtcRuntime extends PtcRuntime {
  /** The configuration schema Cordis validates `ctx.plugin(WorkerPtcRuntime, config)` against. */
  static Config = Config

  private readonly _config: WorkerPtcRuntimeConfig & { cwd: string }
  /** Where environments live, chosen once from `config.isolation`. */
  private readonly _tier: Tier
  /** The policy of a tier that confines by construction: what its runs report without one of their own. */
  private readonly _tierPolicy: RunPolicy | undefined
  private readonly _admission: Admission
  private readonly _initializer: EnvironmentInitializer
  private readonly _programs: ProgramCache
  private readonly _owners: OwnerQueues<PolicyKey>
  private readonly _live = new Set<{ abort: AbortController; done: Promise<unknown> }>()
  /** Runs paused on a held call, by hold id, until `resume` answers them or they expire. */
  private readonly _holds: HeldRuns
  /** The durable tokens this runtime signs and resumes; absent without `durableKey`. */
  private readonly _durable: DurableTokens | undefined
  /**
   * Present on the process host unless the deployment configures `sandbox: 'none'`: every run
   * then carries a policy (the default confinement when the deployment names none).
   */
  private readonly _sandbox: Sandbox | undefined
  /** Bytes of fetch responses the egress broker holds at once for every environment together. */
  private readonly _fetchBytes: ByteBudget
  private _source: EnvironmentSource<PolicyKey> | undefined
  private _disposed = false
  private _admitted = false

  constructor(ctx: Context, config: WorkerPtcRuntimeConfig) {
    super(ctx)
    checkConfig(config)
    this._config = { ...config, cwd: config.cwd ?? process.cwd() }
    this._fetchBytes = new ByteBudget(config.maxHostFetchBytesInFlight, 'maxHostFetchBytesInFlight')
    this._programs = new ProgramCache(config.programFormat)
    if (config.language === 'typescript') typeEraser() // a missing eraser is a configuration error
    if (config.language === 'python') pythonRuntime() // so is a missing interpreter
    this._tier = tierOf(config.isolation)
    this._tierPolicy = this._tier.confinement && runPolicy(this._tier.confinement.policy)
    const sandbox = config.sandbox ?? (this._tier.confines ? DEFAULT_SANDBOX : 'none')
    this._sandbox = sandbox === 'none' ? undefined : new Sandbox(sandbox, config.cwd, config.maxMemoryMb * 2 ** 20)
    const { fixedCwd } = this._tier
    this._admission = new Admission(this._config, this._sandbox, fixedCwd === undefined ? undefined : { tier: this._tier.name, where: fixedCwd })
    this._initializer = new EnvironmentInitializer(this._programs, this._config.language, (reason) => this._drain(reason))
    this._holds = new HeldRuns(config.holdTimeoutMs)
    this._durable = config.durableKey === undefined ? undefined : new DurableTokens({ ...config, durableKey: config.durableKey })
    this._owners = new OwnerQueues(
      {
        take: (key, retry) => this._source!.take(key, 'retained', retry),
        settle: (environment, disposition) => this._source!.settle(environment, disposition),
        aborted: (message) => failure(this._config.maxOutputBytes, 'abort', message),
      },
      config.idleMs,
    )
  }

  /** The language programs are written in unless a request says otherwise. */
  get language(): PtcProgramLanguage {
    return this._config.language
  }

  /** Where each environment's worker lives: its tier's name (`config.isolation`). */
  get isolation(): string {
    return this._tier.name
  }

  override get programFormat(): PtcProgramFormat {
    return this._config.programFormat
  }

  override get retainsState(): boolean {
    return this._config.retainState
  }

  override get sandboxMode(): SandboxMode | undefined {
    return this._sandbox?.policy.mode
  }

  override get timeout() {
    return this._admission.timeout
  }

  override get executionInstructions(): string {
    return executionInstructions({
      format: this._config.programFormat,
      language: this._config.language,
      retainsState: this._config.retainState,
      timeoutMs: this.timeout.defaultMs,
      maxOutputBytes: this._config.maxOutputBytes,
      maxCalls: this._config.maxCalls,
      maxMemoryMb: this._config.maxMemoryMb,
      ...(this._sandbox ? { sandbox: this._sandbox.instructions } : this._tier.confinement ? { sandbox: this._tier.confinement.instructions } : {}),
    })
  }

  resolve(request: PtcRunRequest): PtcRunSpec {
    if (this._disposed) throw new Error(`${NAME}: resolve() after disposal`)
    return this._admission.resolve(request)
  }

  async run(spec: PtcRunSpec): Promise<PtcRunResult> {
    // Admission: misuse rejects; everything after it resolves as a result.
    const policy = this._checkSpec(spec)
    return this._admit(spec, this._journalFor(spec), policy)
  }

  /** Runs an admitted spec under `policy`, resolved once at admission; a durable run records into (or replays) `journal`. */
  private _admit(spec: PtcRunSpec, journal: CallJournal | undefined, policy: AdmittedPolicy | undefined): Promise<PtcRunResult> {
    this._admitted = true
    // A run may answer more than once: paused on a held call, then after each resume.
    const answers = new RunAnswers(this._holds, (policy ?? this._tierPolicy)?.report)
    const first = answers.next(spec.signal)
    const done = this._dispatch(spec, answers.abort.signal, policy, answers, journal).then(
      (result) => answers.finish(result),
      (error: unknown) => answers.refuse(error),
    )
    const entry = { abort: answers.abort, done }
    this._live.add(entry)
    void done.finally(() => this._live.delete(entry))
    return first
  }

  /**
   * Answers the held call `id` of a paused result and resolves with the run's next answer (its
   * result, or paused again); when the run already ended while held (its budget, its output cap,
   * `release`), with how it ended. A durable token (`result.paused.token`) is checked against
   * `durableKey`, refused when older than `durableTokenLifetimeMs`, spent in `durableStore` (a
   * token resumes at most once), and replayed in a fresh environment with `options.bindings`.
   * Rejects on an id that is not held, a token that is forged, altered, signed with another key,
   * expired or already resumed, a malformed decision, or after disposal.
   */
  override async resume(id: string, decision: PtcHoldDecision, options: PtcResumeOptions = {}): Promise<PtcRunResult> {
    if (this._disposed) throw new Error(`${NAME}: resume() after disposal`)
    if (typeof id !== 'string') throw new TypeError(`${NAME}: resume() needs the id of a paused result (result.paused.id), got ${typeof id}`)
    const checked = checkDecision(decision)
    if (isDurableToken(id)) return this._resumeDurable(id, checked, options ?? {})
    if (options?.bindings !== undefined) {
      throw new TypeError(`${NAME}: resume() takes options.bindings only with a durable token; a live hold's run keeps its own bindings`)
    }
    return this._holds.resume(id, checked, options?.signal)
  }

  /** Replays the run a durable token recorded, in a fresh environment, with `decision` for its held call. */
  private async _resumeDurable(token: string, decision: PtcHoldDecision, options: PtcResumeOptions): Promise<PtcRunResult> {
    const durable = this._durable
    if (!durable) {
      throw new Error(`${NAME}: resume() got a durable token, but config.durableKey is not set: configure the key the token was signed with`)
    }
    const refused = (error: unknown) => new Error(`${NAME}: resume() refused the token: ${(error as Error).message}`)
    let record
    try {
      record = await durable.open(token)
    } catch (error) {
      throw refused(error)
    }
    if (record.format !== this._config.programFormat) {
      throw new Error(`${NAME}: resume() refused the token: its program is in the ${record.format} format, and this runtime runs ${this._config.programFormat} programs`)
    }
    if (!Array.isArray(options.bindings)) {
      throw new TypeError(`${NAME}: resume(token) needs options.bindings: a durable token does not carry the run's bindings, so pass the namespaces the run had`)
    }
    const { program, language, cwd, timeoutMs, maxCalls, discardCompletion } = record
    const { bindings, sandboxPolicy, onBindingError, signal } = options
    const spec = this.resolve({
      program, language, timeoutMs, maxCalls, discardCompletion, bindings, pause: 'durable',
      ...(cwd === null ? {} : { cwd }),
      ...(sandboxPolicy === undefined ? {} : { sandboxPolicy }),
      ...(onBindingError === undefined ? {} : { onBindingError }),
      ...(signal === undefined ? {} : { signal }),
    })
    this._checkSpec(spec)
    let journal
    try {
      journal = durable.replay(record, decision)
      // Last: a resume refused as misuse above leaves the token unspent.
      await durable.claim(record)
    } catch (error) {
      throw refused(error)
    }
    const policy = this._checkSpec(spec) // the runtime may have begun disposal while the store answered
    return this._admit(spec, journal, policy)
  }

  /**
   * The journal of a run that pauses durably (the request's `pause`, else the deployment's for a
   * one-shot run), or undefined. Throws on a durable pause the deployment cannot sign or a run
   * with a state owner cannot take. `spec.pause` was checked at admission.
   */
  private _journalFor(spec: PtcRunSpec): CallJournal | undefined {
    const retained = spec.stateOwner !== undefined && this._config.retainState
    if (spec.pause === 'durable' && retained) {
      throw new TypeError(`${NAME}: pause 'durable' cannot take a run with a stateOwner: a replay starts in a fresh environment, without what earlier runs left in the owner's`)
    }
    if ((spec.pause ?? (retained ? 'live' : this._config.pause)) !== 'durable') return undefined
    if (this._durable === undefined) {
      throw new TypeError(`${NAME}: pause 'durable' needs config.durableKey (a string or Buffer of at least 32 bytes) to sign its tokens`)
    }
    // The runtime's default cwd (a sandbox's scratch mount point is per runtime) is not recorded.
    const start = this._sandbox ? (spec.sandboxPolicy?.workspaceRoot ?? this._sandbox.defaultCwd) : this._config.cwd
    const facts = {
      program: spec.program,
      language: spec.language ?? this.language,
      format: this._config.programFormat,
      cwd: spec.cwd === start ? null : spec.cwd,
      timeoutMs: spec.timeoutMs,
      maxCalls: spec.maxCalls ?? this._config.maxCalls,
      discardCompletion: spec.discardCompletion === true,
    }
    return this._durable.record(facts)
  }

  override async release(owner: object): Promise<void> {
    if (this._disposed) throw new Error(`${NAME}: release() after disposal`)
    if (owner === undefined) throw new TypeError(`${NAME}: release() needs the state owner to release`)
    checkStateOwner(owner, 'owner')
    await this._owners.release(owner)
  }

  override registerEnvironmentInitializer(program: string): () => Promise<void> {
    if (this._disposed) throw new Error(`${NAME}: registerEnvironmentInitializer() after disposal`)
    return this._initializer.register(program, this._admitted)
  }

  protected override async start(): Promise<void> {
    await this._sandbox?.start()
    // A deployment whose own policy cannot be confined here fails where its developer looks, at
    // start, instead of failing every run in front of the model.
    const unconfinable = this._sandbox?.unavailable(this._sandbox.deployment)
    if (unconfinable) throw new Error(`${NAME}: ${startFailureMessage(unconfinable)}`)
    // Before the pool spawns: every Python environment then restores the snapshot.
    if (this._config.language === 'python') await pythonSnapshot(pythonRuntime())
    await this._tier.start({ config: this._config, sandbox: this._sandbox })
    const pooled = this._sandbox ? this._keyOf(this._sandbox.deployment) : UNCONFINED
    const spawn = (key: PolicyKey) => this._tier.spawn({ policy: key.policy })
    const { poolSize, poolMemoryMb } = this._config
    const { spareMb } = this._tier
    const ceiling = spareMb === undefined ? poolSize : Math.max(poolSize, Math.floor(poolMemoryMb / spareMb))
    this._source = new EnvironmentSource(spawn, pooled, { floor: poolSize, ceiling }, () => this._tier.capacity?.() ?? Number.POSITIVE_INFINITY)
  }

  protected override async stop(): Promise<void> {
    this._disposed = true
    // Before anything else, every environment is ended in one synchronous step (a signal each):
    // while programs spin, the host gets little of the CPU, and all it did before these signals
    // took that much longer (measured: aborting 100 runs first held them back by 0.2-0.4 s).
    // No run sees its environment's end: each is aborted below, in this same tick.
    this._source?.endAll()
    this._source?.close()
    await this._drain('runtime disposed')
    this._holds.clear()
    this._durable?.close()
    await this._source?.drain()
    this._tier.stop?.()
    this._sandbox?.dispose()
  }

  /** Aborts every admitted run, waits for them, and ends every retained environment. */
  private async _drain(reason: string): Promise<void> {
    const live = [...this._live]
    for (const entry of live) entry.abort.abort(new Error(reason))
    await this._owners.releaseAll(reason)
    await Promise.allSettled(live.map((entry) => entry.done))
  }

  private async _dispatch(spec: PtcRunSpec, signal: AbortSignal, policy: AdmittedPolicy | undefined, answers: RunAnswers, journal: CallJournal | undefined): Promise<PtcRunResult> {
    const limit = this._config.maxOutputBytes
    if (signal.aborted) return failure(limit, 'abort', abortMessage(signal.reason))
    // Never run unconfined what a policy says to confine.
    const unavailable = policy?.unavailable
    if (unavailable) return failure(limit, 'sandbox-unavailable', unavailableMessage(unavailable))
    const language = spec.language ?? this.language
    // The environments that may serve it: those of its policy (and, for Python, spawned for it).
    const key = policy ? this._keyOf(policy, language) : UNCONFINED
    const tooLong = overlongProgram(spec.program, this._config.maxProgramBytes)
    if (tooLong) return failure(limit, 'exception', tooLong)
    const initializer = this._initializer.lowered
    let program
    try {
      program = this._programs.lower(spec.program, [], language)
    } catch (error) {
      if (error instanceof ProgramSyntaxError) return failure(limit, 'exception', error.message)
      throw error
    }
    const egress = policy?.egress
    const plan: RunPlan = {
      program,
      initializer,
      // An environment runs one run at a time, so the run's budget is its environment's.
      bindings: egress ? [...spec.bindings, egressNamespace(egress, { budgets: { environment: new ByteBudget(this._config.maxFetchBytesInFlight, 'maxFetchBytesInFlight'), host: this._fetchBytes } })] : spec.bindings,
      cwd: spec.cwd,
      timeoutMs: spec.timeoutMs,
      signal,
      discardCompletion: spec.discardCompletion === true,
      maxOutputBytes: limit,
      maxPendingCalls: this._config.maxPendingCalls,
      maxPendingCallBytes: this._config.maxPendingCallBytes,
      maxCalls: spec.maxCalls ?? this._config.maxCalls,
      maxCallResultBytes: this._config.maxCallResultBytes,
      oneShot: false,
      onBindingError: spec.onBindingError,
      pause: (pause) => {
        if (!journal) return answers.pause(pause)
        // A durable run answers with a token and ends; its environment is not held.
        const sealed = journal.seal(pause)
        if (sealed.ok) answers.pauseDurably(pause, sealed.token)
        else pause.refuse(sealed.message)
      },
      ...(journal ? { journal } : {}),
    }
    if (spec.stateOwner !== undefined && this._config.retainState) {
      return this._owners.run(spec.stateOwner, key, async (environment, notice, ownerSignal) => {
        const history = historyOf(environment)
        const lowered = this._programs.lowerFor(spec.program, language, history, initializer)
        const declared = declaredBy(history, lowered, initializer)
        const settlement = await runSession(environment, history, { ...plan, program: lowered, signal: ownerSignal, ...(notice ? { notice } : {}) })
        if (settlement.disposition === 'keep') for (const name of declared) history.carried.add(name)
        return settlement
      }, signal)
    }
    const oneShot = (environment: Environment) => {
      const history = historyOf(environment)
      return runSession(environment, history, { ...plan, program: this._programs.lowerFor(spec.program, language, history, initializer), oneShot: true })
    }
    let environment = this._source!.take(key, 'one-shot')
    let settlement = await oneShot(environment)
    if (settlement.unstarted && !signal.aborted) {
      // Its environment died before the program started (a pooled helper killed while idle):
      // nothing ran, so it runs once more in a fresh one.
      await this._source!.settle(environment, settlement.disposition)
      environment = this._source!.take(key, 'one-shot', true)
      settlement = await oneShot(environment)
    }
    await this._source!.settle(environment, settlement.disposition)
    return settlement.result
  }

  /** Refuses a run after disposal or while the initializer is being unregistered, then checks its spec and returns its policy. */
  private _checkSpec(spec: PtcRunSpec): AdmittedPolicy | undefined {
    if (this._disposed) throw new Error(`${NAME}: run() after disposal`)
    if (this._initializer.blocked) throw new Error(`${NAME}: run() refused while ${this._initializer.blocked}`)
    return this._admission.check(spec)
  }

  /** The environment key of `policy`: its id, and the policy to spawn under, carried with the run. */
  private _keyOf(policy: RunPolicy, language: PtcProgramLanguage = this.language): PolicyKey {
    // A confined helper shows Pyodide's directory only when it was spawned after Python was
    // first needed: a Python run on a runtime of another language never takes such a spare.
    const id = language === 'python' && this.language !== 'python' ? `${policy.key}\u0000python` : policy.key
    return { id, policy: policy.policy }
  }
}

function failure(maxOutputBytes: number, kind: PtcRunFailure['kind'], message: string): PtcRunResult {
  return new OutputLedger(maxOutputBytes).finish({ error: { kind, message } })
}
