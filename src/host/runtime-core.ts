/**
 * The runtime itself, outside Cordis: what `WorkerPtcRuntime` (provider.ts) does, kept in a plain
 * object. Consumers reach the provider through Cordis' proxy, where every property read costs a
 * context lookup and a proxy; the provider reads this object once per call, and everything a run
 * touches after that is read here directly. It admits a run (the spec checked and its policy
 * resolved: admission.ts) and hands it to its dispatch (run/dispatch.ts), which carries it to its
 * answers; a durable token's resume goes through durable/runs.ts. It starts the tier and the
 * pool, and disposal aborts every run with "runtime disposed" and awaits every environment.
 */
import type {
  PtcHoldDecision,
  PtcProgramFormat,
  PtcProgramLanguage,
  PtcResumeOptions,
  PtcRunRequest,
  PtcRunResult,
  PtcRunSpec,
  SandboxMode,
} from '../seam/types.js'
import { Admission, NAME, checkDecision, checkStateOwner } from './admission.js'
import { type WorkerPtcRuntimeConfig, checkConfig } from './config.js'
import { HeldRuns } from './run/holds.js'
import { EnvironmentInitializer } from './initializer.js'
import { executionInstructions } from './instructions.js'
import { ProgramCache } from './run/programs.js'
import { type PolicyKey, RunDispatch, UNCONFINED } from './run/dispatch.js'
import { type AdmittedPolicy, DEFAULT_SANDBOX, Sandbox, startFailureMessage } from './sandbox/confinement.js'
import { runPolicy } from './sandbox/policy.js'
import { EnvironmentSource } from './environments/pool.js'
import { type Tier, tierOf } from './environments/tiers.js'
import { checkTypeEraser } from './run/typescript-eraser.js'
import { pythonRuntime } from '../python/runtime.js'
import { pythonSnapshot } from '../python/snapshot.js'
import { isDurableToken } from './durable/record.js'
import { DurableRuns } from './durable/runs.js'
import type { CallJournal } from './durable/journal.js'

/** What the Cordis service `WorkerPtcRuntime` delegates to; see provider.ts for the API it serves. */
export class RuntimeCore {
  private readonly _config: WorkerPtcRuntimeConfig & { cwd: string }
  private readonly _programs: ProgramCache
  /** Where environments live, chosen once from `config.isolation`. */
  private readonly _tier: Tier
  private readonly _admission: Admission
  private readonly _initializer: EnvironmentInitializer
  /** Runs paused on a held call, by hold id, until `resume` answers them or they expire. */
  private readonly _holds: HeldRuns
  private readonly _durable: DurableRuns
  /** Carries admitted runs to their answers, and owns the pool once the runtime started. */
  private readonly _dispatch: RunDispatch
  /**
   * Present on the process host unless the deployment configures `sandbox: 'none'`: every run
   * then carries a policy (the default confinement when the deployment names none).
   */
  private readonly _sandbox: Sandbox | undefined
  private _disposed = false
  private _admitted = false

  constructor(config: WorkerPtcRuntimeConfig) {
    checkConfig(config)
    this._config = { ...config, cwd: config.cwd ?? process.cwd() }
    const programs = (this._programs = new ProgramCache(config.programFormat))
    if (config.language === 'typescript') checkTypeEraser() // a missing eraser is a configuration error
    if (config.language === 'python') pythonRuntime() // so is a missing interpreter
    this._tier = tierOf(config.isolation)
    const sandbox = config.sandbox ?? (this._tier.confines ? DEFAULT_SANDBOX : 'none')
    this._sandbox = sandbox === 'none' ? undefined : new Sandbox(sandbox, config.cwd, config.maxMemoryMb * 2 ** 20)
    const { fixedCwd } = this._tier
    this._admission = new Admission(this._config, this._sandbox, fixedCwd === undefined ? undefined : { tier: this._tier.name, where: fixedCwd })
    this._initializer = new EnvironmentInitializer(programs, this._config.language, (reason) => this._dispatch.drain(reason))
    this._holds = new HeldRuns(config.holdTimeoutMs)
    this._durable = new DurableRuns(this._config, this._sandbox)
    this._dispatch = new RunDispatch({
      config: this._config,
      programs,
      initializer: this._initializer,
      holds: this._holds,
      tierPolicy: this._tier.confinement && runPolicy(this._tier.confinement.policy),
    })
  }

  /** The language programs are written in unless a request says otherwise. */
  get language(): PtcProgramLanguage {
    return this._config.language
  }

  /** Where each environment's worker lives: its tier's name (`config.isolation`). */
  get isolation(): string {
    return this._tier.name
  }

  get programFormat(): PtcProgramFormat {
    return this._config.programFormat
  }

  get retainsState(): boolean {
    return this._config.retainState
  }

  get sandboxMode(): SandboxMode | undefined {
    return this._sandbox?.policy.mode
  }

  get timeout() {
    return this._admission.timeout
  }

  get maxProgramBytes(): number {
    return this._config.maxProgramBytes
  }

  get executionInstructions(): string {
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

  run(spec: PtcRunSpec): Promise<PtcRunResult> {
    // Admission: misuse rejects; everything after it resolves as a result. Inline, so that the
    // run goes from admission straight to its dispatch.
    let policy: AdmittedPolicy | undefined
    let journal: CallJournal | undefined
    try {
      policy = this._checkSpec(spec)
      // Only a durable pause, the request's or the deployment's, records a journal.
      if (spec.pause === 'durable' || (spec.pause === undefined && this._config.pause === 'durable')) journal = this._durable.journalFor(spec)
    } catch (error) {
      return Promise.reject(error)
    }
    this._admitted = true
    return this._dispatch.admit(spec, policy, journal)
  }

  /** What `WorkerPtcRuntime.resume` promises (provider.ts). */
  async resume(id: string, decision: PtcHoldDecision, options: PtcResumeOptions = {}): Promise<PtcRunResult> {
    if (this._disposed) throw new Error(`${NAME}: resume() after disposal`)
    if (typeof id !== 'string') throw new TypeError(`${NAME}: resume() needs the id of a paused result (result.paused.id), got ${typeof id}`)
    const checked = checkDecision(decision)
    if (isDurableToken(id)) {
      return this._durable.resume(id, checked, options ?? {}, {
        resolve: (request) => this.resolve(request),
        check: (spec) => this._checkSpec(spec),
        admit: (spec, policy, journal) => {
          this._admitted = true
          return this._dispatch.admit(spec, policy, journal)
        },
      })
    }
    if (options?.bindings !== undefined) {
      throw new TypeError(`${NAME}: resume() takes options.bindings only with a durable token; a live hold's run keeps its own bindings`)
    }
    return this._holds.resume(id, checked, options?.signal)
  }

  async release(owner: object): Promise<void> {
    if (this._disposed) throw new Error(`${NAME}: release() after disposal`)
    if (owner === undefined) throw new TypeError(`${NAME}: release() needs the state owner to release`)
    checkStateOwner(owner, 'owner')
    await this._dispatch.owners.release(owner)
  }

  registerEnvironmentInitializer(program: string): () => Promise<void> {
    if (this._disposed) throw new Error(`${NAME}: registerEnvironmentInitializer() after disposal`)
    return this._initializer.register(program, this._admitted)
  }

  async start(): Promise<void> {
    await this._sandbox?.start()
    // A deployment whose own policy cannot be confined here fails where its developer looks, at
    // start, instead of failing every run in front of the model.
    const unconfinable = this._sandbox?.startProblem()
    if (unconfinable) throw new Error(`${NAME}: ${startFailureMessage(unconfinable)}`)
    // Before the pool spawns: every Python environment then restores the snapshot.
    if (this._config.language === 'python') await pythonSnapshot(pythonRuntime())
    if (this._config.language === 'typescript') await this._programs.warmTypeEraser()
    await this._tier.start({ config: this._config, sandbox: this._sandbox })
    // The deployment's policy is its environments' key (run/dispatch.ts `PolicyKey`).
    const pooled: PolicyKey = this._sandbox?.deployment ?? UNCONFINED
    const spawn = (key: PolicyKey) => this._tier.spawn({ policy: key.policy })
    const { poolSize, poolMemoryMb } = this._config
    const { spareMb } = this._tier
    const ceiling = spareMb === undefined ? poolSize : Math.max(poolSize, Math.floor(poolMemoryMb / spareMb))
    this._dispatch.source = new EnvironmentSource(spawn, pooled, { floor: poolSize, ceiling }, () => this._tier.capacity?.() ?? Number.POSITIVE_INFINITY)
  }

  async stop(): Promise<void> {
    this._disposed = true
    const source = this._dispatch.source
    // Before anything else, every environment is ended in one synchronous step (a signal each):
    // while programs spin, the host gets little of the CPU, and all it did before these signals
    // took that much longer (measured: aborting 100 runs first held them back by 0.2-0.4 s).
    // No run sees its environment's end: each is aborted below, in this same tick.
    source?.endAll()
    source?.close()
    await this._dispatch.drain('runtime disposed')
    this._holds.clear()
    this._durable.close()
    await source?.drain()
    await this._tier.stop?.()
    this._sandbox?.dispose()
    this._programs.close()
  }

  /** Refuses a run after disposal or while the initializer is being unregistered, then checks its spec and returns its policy. */
  private _checkSpec(spec: PtcRunSpec): AdmittedPolicy | undefined {
    if (this._disposed) throw new Error(`${NAME}: run() after disposal`)
    if (this._initializer.blocked) throw new Error(`${NAME}: run() refused while ${this._initializer.blocked}`)
    return this._admission.check(spec)
  }
}
