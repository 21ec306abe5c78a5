/**
 * The seam: the abstract `ptcRuntime` service. This is the only file that touches Cordis'
 * service machinery, so a Cordis upgrade touches one file. What consumers call is `PtcRuntime`
 * of `api.ts`, which this class implements without Cordis in its type.
 */
import { type Context, Service } from 'cordis'
import type { PtcRuntime as PtcRuntimeApi } from './api.js'
import type { PtcHoldDecision, PtcProgramFormat, PtcResumeOptions, PtcRunRequest, PtcRunResult, PtcRunSpec, SandboxMode } from './types.js'

declare module 'cordis' {
  interface Context {
    ptcRuntime: PtcRuntime
  }
}

/**
 * Runs model-written programs against host bindings. Consumers reach it as `ctx.ptcRuntime`
 * and call `run(resolve(request))`. Every program outcome resolves as a result; `run` rejects
 * only on caller misuse. Providers subclass it; disposing the providing plugin removes the
 * service, and a second provider in the same context is refused by Cordis.
 *
 * Instances are reached through a Cordis proxy, so subclasses keep state in TS `private _x`
 * fields, never ES `#private` ones.
 */
export abstract class PtcRuntime extends Service implements PtcRuntimeApi {
  /** Source language of programs, lowercase (`'javascript'`). */
  abstract readonly language: string
  /** Substrate label, not a security claim (`'worker-thread'`, `'process'`). */
  abstract readonly isolation: string

  constructor(ctx: Context) {
    super(ctx, 'ptcRuntime')
    // Cordis hands each method a consumer reaches through `ctx.ptcRuntime` a shadow of the
    // caller's context, so `this.ctx` inside it is the caller's: a context extension and two
    // proxies per access, and every `this._x` read inside then crosses both (0.3 ms of a 1.3 ms
    // pooled run, bench/latency.mjs). Without them a provider's `this.ctx` is the context it was
    // plugged into, whoever calls; no provider method here reads it.
    ;(this as unknown as Record<symbol, { noShadow?: boolean }>)[Service.tracker]!.noShadow = true
  }

  /** Which evaluation form `program` follows. */
  get programFormat(): PtcProgramFormat {
    return 'function-body'
  }

  /** Whether runs that share a `stateOwner` keep memory between runs. */
  get retainsState(): boolean {
    return false
  }

  /** Provider-written guidance for the model; `''` when none. */
  get executionInstructions(): string {
    return ''
  }

  /** Deployment file-policy mode; `undefined` when the provider cannot confine files. */
  get sandboxMode(): SandboxMode | undefined {
    return undefined
  }

  /** Elapsed default and cap, when per-call numeric overrides are supported. */
  get timeout(): { defaultMs: number; maxMs: number } | undefined {
    return undefined
  }

  /** UTF-8 bytes a program may have (a longer one fails its run unread); `undefined` when the provider states none. */
  get maxProgramBytes(): number | undefined {
    return undefined
  }

  /** Validates options and applies defaults. Throws on an invalid or unsupported choice. */
  abstract resolve(request: PtcRunRequest): PtcRunSpec

  /** Executes a resolved spec. Rejects only on caller misuse. */
  abstract run(spec: PtcRunSpec): Promise<PtcRunResult>

  /**
   * Answers the held call of a paused result (`result.paused.id`) and resolves with the run's
   * next answer, like `run`: its result, or paused again. `options.signal` stops the run from
   * here on, as a run's signal does until its first answer. Rejects on an unknown or already
   * answered id. A durable token (`result.paused.token`) is replayed in a fresh environment
   * instead, with `options.bindings`. Unsupported by default.
   */
  resume(_id: string, _decision: PtcHoldDecision, _options?: PtcResumeOptions): Promise<PtcRunResult> {
    return Promise.reject(new Error(`${this.constructor.name} does not hold calls, so there is nothing to resume`))
  }

  /** Ends an owner's retained environment and awaits its resources. Unknown owners resolve. */
  release(_owner: object): Promise<void> {
    return Promise.resolve()
  }

  /** Registers source evaluated once in every new environment. Unsupported by default. */
  registerEnvironmentInitializer(_program: string): () => Promise<void> {
    throw new Error(`${this.constructor.name} does not support environment initializers`)
  }

  /** Acquires the provider's resources; the service becomes visible once this settles. */
  protected start(): Promise<void> {
    return Promise.resolve()
  }

  /** Aborts in-flight work and releases every resource; awaited by `fiber.dispose()`. */
  protected stop(): Promise<void> {
    return Promise.resolve()
  }

  /** Cordis lifecycle hook: runs `start`, and `stop` when the plugin is disposed. */
  async [Service.init]() {
    await this.start()
    return () => this.stop()
  }
}
