/**
 * `WorkerPtcRuntime`: the public provider. It validates requests, picks an environment (a
 * pooled fresh worker, or the owner's retained one), lowers the program and hands the rest to
 * `execute`. Disposal aborts every run with "runtime disposed" and awaits every worker.
 */
import { statSync } from 'node:fs'
import path from 'node:path'
import type { Context } from 'cordis'
import { validateBindings } from '../seam/names.js'
import { PtcRuntime } from '../seam/runtime.js'
import type {
  PtcProgramFormat,
  PtcRunFailure,
  PtcRunRequest,
  PtcRunResult,
  PtcRunSpec,
  SandboxExecutionPolicy,
  SandboxMode,
} from '../seam/types.js'
import { ProgramSyntaxError } from '../transform/index.js'
import { Config, type WorkerPtcRuntimeConfig, checkConfig } from './config.js'
import { type Environment, ThreadEnvironment } from './environment.js'
import type { RunPlan } from './execution.js'
import { executionInstructions } from './instructions.js'
import { OutputLedger } from './ledger.js'
import { EnvironmentPool } from './pool.js'
import { ProgramCache, rehearsalProgram } from './programs.js'
import { RetainedEnvironments } from './owners.js'
import { Confinement, executeWhenReady, unavailableMessage } from './sandbox/confinement.js'

const NAME = 'WorkerPtcRuntime'

/**
 * Runs each program in a fresh Node worker thread (or the state owner's retained one), with
 * host bindings proxied over a private MessagePort. Register with
 * `ctx.plugin(WorkerPtcRuntime, config)`; consumers reach it as `ctx.ptcRuntime`.
 */
export class WorkerPtcRuntime extends PtcRuntime {
  /** The configuration schema Cordis validates `ctx.plugin(WorkerPtcRuntime, config)` against. */
  static Config = Config
  readonly language = 'javascript'

  private readonly _config: WorkerPtcRuntimeConfig & { cwd: string }
  private readonly _programs: ProgramCache
  private readonly _owners: RetainedEnvironments
  private readonly _live = new Set<{ abort: AbortController; done: Promise<unknown> }>()
  /** Disposals of finished one-shot environments, still terminating in the background. */
  private readonly _retiring = new Set<Promise<void>>()
  private _pool: EnvironmentPool | undefined
  /** Present when the deployment configures `sandbox`: every run then executes in a helper. */
  private readonly _confinement: Confinement | undefined
  private _disposed = false
  private _admitted = false
  private _initializer: string | undefined
  private _blocked: string | undefined

  constructor(ctx: Context, config: WorkerPtcRuntimeConfig) {
    super(ctx)
    checkConfig(config)
    this._config = { ...config, cwd: config.cwd ?? process.cwd() }
    this._programs = new ProgramCache(config.programFormat)
    this._owners = new RetainedEnvironments(() => this._pool!.take('retained'), config.idleMs)
    this._confinement = config.sandbox && new Confinement(config.sandbox, {
      cwd: this._config.cwd,
      poolSize: config.poolSize,
      idleMs: config.idleMs,
      maxOldGenerationSizeMb: config.maxOldGenerationSizeMb,
      maxOutputBytes: config.maxOutputBytes,
    })
  }

  /** A substrate label: each run's worker thread lives in this process, or in a helper process under a sandbox. */
  get isolation(): string {
    return this._confinement ? 'process' : 'worker-thread'
  }

  override get programFormat(): PtcProgramFormat {
    return this._config.programFormat
  }

  override get retainsState(): boolean {
    return this._config.retainState
  }

  override get sandboxMode(): SandboxMode | undefined {
    return this._confinement?.policy.mode
  }

  override get timeout() {
    return { defaultMs: Math.min(this._config.timeoutMs, this._config.maxTimeoutMs), maxMs: this._config.maxTimeoutMs }
  }

  override get executionInstructions(): string {
    return executionInstructions({
      format: this._config.programFormat,
      retainsState: this._config.retainState,
      timeoutMs: this.timeout.defaultMs,
      maxOutputBytes: this._config.maxOutputBytes,
      ...(this._confinement ? { sandbox: this._confinement.instructions } : {}),
    })
  }

  resolve(request: PtcRunRequest): PtcRunSpec {
    if (this._disposed) throw new Error(`${NAME}: resolve() after disposal`)
    if (typeof request !== 'object' || request === null) throw new TypeError(`${NAME}: request must be an object`)
    if (this._confinement) {
      // Every run of a sandboxed deployment carries its policy; cwd defaults to its workspace root.
      const sandboxPolicy = this._confinement.resolvePolicy(request.sandboxPolicy, `${NAME}: sandboxPolicy`)
      const cwd = this._resolveCwd(request.cwd ?? sandboxPolicy.workspaceRoot)
      return { ...request, cwd, timeoutMs: this._resolveTimeout(request.timeoutMs), sandboxPolicy }
    }
    if (request.sandboxPolicy !== undefined) {
      throw new Error(`${NAME}: sandboxPolicy is unsupported because no sandbox is configured`)
    }
    return { ...request, cwd: this._resolveCwd(request.cwd), timeoutMs: this._resolveTimeout(request.timeoutMs) }
  }

  async run(spec: PtcRunSpec): Promise<PtcRunResult> {
    this._checkSpec(spec)
    const policy = this._confinement?.resolvePolicy(spec.sandboxPolicy, `${NAME}: spec.sandboxPolicy`)
    this._admitted = true
    const runAbort = new AbortController()
    const signals = [runAbort.signal, ...(spec.signal ? [spec.signal] : [])]
    const signal = signals.length === 1 ? runAbort.signal : AbortSignal.any(signals)
    const report = (result: PtcRunResult) => (policy ? this._confinement!.report(policy, result) : result)
    if (signal.aborted) return report(failure(this._config.maxOutputBytes, 'abort', reasonOf(signal.reason)))
    const done = this._dispatch(spec, signal, policy).then(report)
    const entry = { abort: runAbort, done }
    this._live.add(entry)
    try {
      return await done
    } finally {
      this._live.delete(entry)
    }
  }

  override release(owner: object): Promise<void> {
    return Promise.all([this._owners.release(owner), this._confinement?.release(owner)]).then(() => undefined)
  }

  override registerEnvironmentInitializer(program: string): () => Promise<void> {
    if (this._disposed) throw new Error(`${NAME}: registerEnvironmentInitializer() after disposal`)
    if (typeof program !== 'string') throw new TypeError(`${NAME}: the initializer program must be a string`)
    if (this._initializer !== undefined) throw new Error(`${NAME}: an environment initializer is already registered`)
    if (this._admitted) throw new Error(`${NAME}: an environment initializer must be registered before the first run`)
    this._programs.lower(program) // throws ProgramSyntaxError when it does not parse
    this._initializer = program
    let cleanup: Promise<void> | undefined
    return () => {
      cleanup ??= this._unregisterInitializer().catch((error: unknown) => {
        cleanup = undefined // a failed cleanup may be retried; execution stays blocked until then
        throw error
      })
      return cleanup
    }
  }

  protected override async start(): Promise<void> {
    // A sandboxed deployment runs every program in a helper, so it pre-spawns helpers instead.
    if (this._confinement) await this._confinement.start()
    else this._pool = new EnvironmentPool(this._config.poolSize, () => this._spawn())
  }

  protected override async stop(): Promise<void> {
    this._disposed = true
    await this._drain('runtime disposed')
    await this._pool?.drain()
    await this._confinement?.drain()
  }

  private async _unregisterInitializer(): Promise<void> {
    this._blocked = 'the environment initializer is being unregistered'
    await this._drain('the environment initializer was unregistered')
    this._initializer = undefined
    this._blocked = undefined
  }

  /** Aborts every admitted run, waits for them, and releases every retained environment. */
  private async _drain(reason: string): Promise<void> {
    const live = [...this._live]
    for (const entry of live) entry.abort.abort(new Error(reason))
    await Promise.allSettled(live.map((entry) => entry.done))
    await Promise.all([this._owners.releaseAll(), this._confinement?.releaseAll(), ...this._retiring])
  }

  private _spawn(): Environment {
    return new ThreadEnvironment({ maxOldGenerationSizeMb: this._config.maxOldGenerationSizeMb, rehearsal: rehearsalProgram() })
  }

  private async _dispatch(spec: PtcRunSpec, signal: AbortSignal, policy: SandboxExecutionPolicy | undefined): Promise<PtcRunResult> {
    // Never run unconfined what a policy says to confine.
    const unavailable = policy && this._confinement!.unavailable(policy)
    if (unavailable) return failure(this._config.maxOutputBytes, 'sandbox-unavailable', unavailableMessage(unavailable))
    let program
    try {
      program = this._programs.lower(spec.program)
    } catch (error) {
      if (error instanceof ProgramSyntaxError) return failure(this._config.maxOutputBytes, 'exception', error.message)
      throw error
    }
    const plan = (overrides: Partial<RunPlan>): RunPlan => ({
      program,
      initializer: this._initializer === undefined ? undefined : this._programs.lower(this._initializer),
      bindings: spec.bindings,
      cwd: spec.cwd,
      timeoutMs: spec.timeoutMs,
      signal,
      discardCompletion: spec.discardCompletion === true,
      maxOutputBytes: this._config.maxOutputBytes,
      maxPendingCalls: this._config.maxPendingCalls,
      oneShot: false,
      ...overrides,
    })
    if (spec.stateOwner !== undefined && this._config.retainState) {
      const owners = policy ? this._confinement!.owners(policy, spec.cwd) : this._owners
      const settlement = await owners.run(spec.stateOwner, (environment, notice, ownerSignal) => {
        const carried = this._config.programFormat === 'scoped-repl' ? this._programs.lower(spec.program, environment.carried) : program
        const result = executeWhenReady(environment, plan({ program: carried, notice, signal: AbortSignal.any([signal, ownerSignal]) }))
        return result.then((settlement) => {
          if (settlement.reusable) for (const name of carried.declared) environment.carried.add(name)
          return settlement
        })
      })
      return settlement.result
    }
    const environment = policy ? this._confinement!.take(policy, spec.cwd, 'one-shot') : this._pool!.take('one-shot')
    let trailing = false
    try {
      const settlement = await executeWhenReady(environment, plan({ oneShot: true }))
      trailing = settlement.workerEnding && environment.disposalMayTrail
      return settlement.result
    } finally {
      if (trailing) this._retire(environment)
      else await environment.dispose()
    }
  }

  /**
   * Disposes a one-shot environment whose worker is ending itself without delaying the run's
   * result: a worker's exit takes several milliseconds, and nothing of the program runs
   * meanwhile. Draining the runtime still awaits it.
   */
  private _retire(environment: Environment): void {
    const disposal = environment.dispose().finally(() => this._retiring.delete(disposal))
    disposal.catch(() => undefined) // surfaced by whoever drains the runtime
    this._retiring.add(disposal)
  }

  private _resolveCwd(cwd: unknown): string {
    const value = cwd === undefined ? this._config.cwd : cwd
    if (typeof value !== 'string' || !path.isAbsolute(value)) {
      throw new TypeError(`${NAME}: cwd must be an absolute path, got ${JSON.stringify(value)}`)
    }
    let directory = false
    try {
      directory = statSync(value).isDirectory()
    } catch {
      // reported below
    }
    if (!directory) throw new Error(`${NAME}: cwd must be an existing directory, got ${JSON.stringify(value)}`)
    return value
  }

  private _resolveTimeout(timeoutMs: unknown): number | null {
    if (timeoutMs === undefined) return this.timeout.defaultMs
    if (timeoutMs === null) return null
    if (typeof timeoutMs !== 'number' || !Number.isFinite(timeoutMs) || timeoutMs <= 0) {
      throw new TypeError(`${NAME}: timeoutMs must be a positive finite number or null, got ${String(timeoutMs)}`)
    }
    return Math.min(timeoutMs, this._config.maxTimeoutMs)
  }

  private _checkSpec(spec: PtcRunSpec): void {
    if (this._disposed) throw new Error(`${NAME}: run() after disposal`)
    if (this._blocked) throw new Error(`${NAME}: run() refused while ${this._blocked}`)
    if (typeof spec !== 'object' || spec === null) throw new TypeError(`${NAME}: run() needs a spec from resolve()`)
    if (typeof spec.program !== 'string') throw new TypeError(`${NAME}: spec.program must be a string`)
    if (typeof spec.cwd !== 'string' || !path.isAbsolute(spec.cwd)) {
      throw new TypeError(`${NAME}: spec.cwd must be an absolute path; pass the request through resolve() first`)
    }
    const { timeoutMs } = spec
    if (timeoutMs !== null && (typeof timeoutMs !== 'number' || !Number.isFinite(timeoutMs) || timeoutMs <= 0)) {
      throw new TypeError(`${NAME}: spec.timeoutMs must be a positive finite number or null; pass the request through resolve() first`)
    }
    if (timeoutMs !== null && timeoutMs > this._config.maxTimeoutMs) {
      throw new RangeError(`${NAME}: spec.timeoutMs ${timeoutMs} exceeds maxTimeoutMs ${this._config.maxTimeoutMs}`)
    }
    if (spec.sandboxPolicy !== undefined && !this._confinement) {
      throw new Error(`${NAME}: sandboxPolicy is unsupported because no sandbox is configured`)
    }
    try {
      validateBindings(spec.bindings)
    } catch (error) {
      throw new TypeError(`${NAME}: ${(error as Error).message}`)
    }
  }
}

function reasonOf(reason: unknown): string {
  if (reason instanceof Error) return reason.message
  return reason === undefined ? 'the run was aborted' : String(reason)
}

function failure(maxOutputBytes: number, kind: PtcRunFailure['kind'], message: string): PtcRunResult {
  return new OutputLedger(maxOutputBytes).finish({ error: { kind, message } })
}
