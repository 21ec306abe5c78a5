/**
 * What a runtime offers its consumers, with no Cordis type in it: code that starts the runtime
 * with `createPtcRuntime`, and the AI SDK and MCP adapters, compile against this alone, so
 * Cordis's declarations never reach a project that does not use Cordis.
 */
import type { PtcHoldDecision, PtcProgramFormat, PtcResumeOptions, PtcRunRequest, PtcRunResult, PtcRunSpec, SandboxMode } from './types.js'

/**
 * Runs model-written programs against host bindings: `run(resolve(request))`. Every program
 * outcome resolves as a result; `run` rejects only on caller misuse. `createPtcRuntime` gives
 * one; in a Cordis app it is `ctx.ptcRuntime` (see `ptc-runtime/cordis`).
 */
export interface PtcRuntime {
  /** Source language of programs by default, lowercase (`'javascript'`, `'typescript'`). */
  readonly language: string
  /** Substrate label, not a security claim (`'process'`, `'thread'`, `'container'`). */
  readonly isolation: string
  /** Which evaluation form `program` follows. */
  readonly programFormat: PtcProgramFormat
  /** Whether runs that share a `stateOwner` keep memory between runs. */
  readonly retainsState: boolean
  /** Provider-written guidance for the model; `''` when none. */
  readonly executionInstructions: string
  /** Deployment file-policy mode; `undefined` when the provider cannot confine files. */
  readonly sandboxMode: SandboxMode | undefined
  /** Elapsed default and cap, when per-call numeric overrides are supported. */
  readonly timeout: { defaultMs: number; maxMs: number } | undefined
  /** UTF-8 bytes a program may have (a longer one fails its run unread); `undefined` when the provider states none. */
  readonly maxProgramBytes: number | undefined
  /** Validates options and applies defaults. Throws on an invalid or unsupported choice. */
  resolve(request: PtcRunRequest): PtcRunSpec
  /** Executes a resolved spec. Rejects only on caller misuse. */
  run(spec: PtcRunSpec): Promise<PtcRunResult>
  /**
   * Answers the held call of a paused result (`result.paused.id`) and resolves with the run's
   * next answer, like `run`: its result, or paused again. `options.signal` stops the run from
   * here on, as a run's signal does until its first answer. Rejects on an unknown or already
   * answered id. A durable token (`result.paused.token`) is replayed in a fresh environment
   * instead, with `options.bindings`.
   */
  resume(id: string, decision: PtcHoldDecision, options?: PtcResumeOptions): Promise<PtcRunResult>
  /** Ends an owner's retained environment and awaits its resources. Unknown owners resolve. */
  release(owner: object): Promise<void>
  /** Registers source evaluated once in every new environment before its first program; the returned function unregisters it. */
  registerEnvironmentInitializer(program: string): () => Promise<void>
}
