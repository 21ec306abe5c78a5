/**
 * `WorkerPtcRuntime`: the public provider, the Cordis service consumers call. Each method hands
 * the call on to its core (runtime-core.ts): Cordis reaches the service through a proxy, where
 * every property read by name costs a context lookup and a new proxy (0.2 ms of a 1.1 ms pooled
 * run when the run read its state here, bench/latency.mjs). The core sits under a symbol, which
 * the proxy passes straight through.
 */
import type { Context } from 'cordis'
import { PtcRuntime } from '../seam/runtime.js'
import type { PtcHoldDecision, PtcResumeOptions, PtcRunRequest, PtcRunSpec } from '../seam/types.js'
import { Config, type WorkerPtcRuntimeConfig } from './config.js'
import { RuntimeCore } from './runtime-core.js'

const CORE = Symbol('core')

/**
 * Runs each program in a fresh Node worker (or the state owner's retained one), hosted in a
 * helper process of its own by default, with host bindings proxied over a private channel.
 * Register with `ctx.plugin(WorkerPtcRuntime, config)`; consumers reach it as `ctx.ptcRuntime`.
 */
export class WorkerPtcRuntime extends PtcRuntime {
  /** The configuration schema Cordis validates `ctx.plugin(WorkerPtcRuntime, config)` against. */
  static Config = Config

  private readonly [CORE]: RuntimeCore

  constructor(ctx: Context, config: WorkerPtcRuntimeConfig) {
    super(ctx)
    this[CORE] = new RuntimeCore(config)
  }

  /** The language programs are written in unless a request says otherwise. */
  get language() {
    return this[CORE].language
  }

  /** Where each environment's worker lives: its tier's name (`config.isolation`). */
  get isolation() {
    return this[CORE].isolation
  }

  override get programFormat() {
    return this[CORE].programFormat
  }

  override get retainsState() {
    return this[CORE].retainsState
  }

  override get sandboxMode() {
    return this[CORE].sandboxMode
  }

  override get timeout() {
    return this[CORE].timeout
  }

  override get maxProgramBytes() {
    return this[CORE].maxProgramBytes
  }

  override get executionInstructions() {
    return this[CORE].executionInstructions
  }

  resolve(request: PtcRunRequest) {
    return this[CORE].resolve(request)
  }

  run(spec: PtcRunSpec) {
    return this[CORE].run(spec)
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
  override resume(id: string, decision: PtcHoldDecision, options?: PtcResumeOptions) {
    return this[CORE].resume(id, decision, options)
  }

  override release(owner: object) {
    return this[CORE].release(owner)
  }

  override registerEnvironmentInitializer(program: string) {
    return this[CORE].registerEnvironmentInitializer(program)
  }

  protected override start() {
    return this[CORE].start()
  }

  protected override stop() {
    return this[CORE].stop()
  }
}
