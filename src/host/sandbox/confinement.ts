/**
 * The sandbox half of the provider: resolves policies, knows whether bubblewrap works here,
 * and supplies helper environments — pre-spawned for the deployment's default policy and
 * cwd, fresh for any other, and retained per (state owner, policy, cwd). Created only when the
 * deployment configures `sandbox`; the provider delegates every policy decision to it.
 */
import type { PtcRunResult, SandboxExecutionPolicy, SandboxMode, SandboxNetwork } from '../../seam/types.js'
import type { Environment } from '../environment.js'
import { type RunPlan, type Settlement, execute } from '../execution.js'
import { HelperEnvironment } from '../helper-environment.js'
import { rehearsalProgram } from '../programs.js'
import { OutputLedger } from '../ledger.js'
import { RetainedEnvironments } from '../owners.js'
import { EnvironmentPool } from '../pool.js'
import { helperWrapper, locateBwrap, probeBwrap } from './bwrap.js'
import { checkPolicy, checkRoots, isConfined, policyInstructions, policyKey, resolveRoots, sandboxFacts } from './policy.js'
import { RUNTIME_PATHS } from './runtime-files.js'

/** The deployment's `sandbox` configuration, after schema defaults. */
export interface SandboxConfig {
  mode: SandboxMode
  workspaceRoot?: string
  writableRoots?: string[]
  network?: SandboxNetwork
  bwrapPath: string
}

export interface ConfinementOptions {
  /** Workspace root when the sandbox config names none. */
  cwd: string
  poolSize: number
  idleMs: number
  maxOldGenerationSizeMb: number
  maxOutputBytes: number
}

export class Confinement {
  /** The deployment default, applied to requests without an explicit policy. */
  readonly policy: SandboxExecutionPolicy
  private readonly _owners = new Map<string, RetainedEnvironments>()
  private _pool: EnvironmentPool | undefined
  private _bwrap: string | undefined
  private _problem: string | undefined = 'the sandbox has not started'

  constructor(
    private readonly _config: SandboxConfig,
    private readonly _options: ConfinementOptions,
  ) {
    this.policy = resolveRoots(checkPolicy({ ..._config, workspaceRoot: _config.workspaceRoot ?? _options.cwd }, 'config.sandbox'))
  }

  /** One paragraph for `executionInstructions` about what the default policy lets programs do. */
  get instructions(): string {
    return policyInstructions(this.policy)
  }

  /**
   * The canonical policy for a request: its explicit one (validated; errors name `field`) or
   * the deployment's.
   */
  resolvePolicy(policy: unknown, field: string): SandboxExecutionPolicy {
    return policy === undefined ? this.policy : checkPolicy(policy, field)
  }

  /** Finds and probes bubblewrap, then pre-spawns helpers for the default policy and cwd. */
  async start(): Promise<void> {
    if (process.platform !== 'linux') {
      this._problem = `bubblewrap confinement needs Linux, this is ${process.platform}`
    } else {
      this._bwrap = locateBwrap(this._config.bwrapPath)
      this._problem = this._bwrap
        ? await probeBwrap(this._bwrap)
        : `bubblewrap was not found (sandbox.bwrapPath is ${JSON.stringify(this._config.bwrapPath)})`
    }
    if (this.unavailable(this.policy) === undefined) {
      this._pool = new EnvironmentPool(this._options.poolSize, () => this._spawn(this.policy, this.policy.workspaceRoot))
    }
  }

  /** Why runs under `policy` cannot be confined here, or `undefined` when they can. */
  unavailable(policy: SandboxExecutionPolicy): string | undefined {
    return isConfined(policy.mode) ? this._problem ?? checkRoots(policy) : undefined
  }

  /** A never-used helper environment for a one-shot run or a new state owner. */
  take(policy: SandboxExecutionPolicy, cwd: string, use: 'one-shot' | 'retained'): Environment {
    const pooled = this._pool && policyKey(policy, cwd) === policyKey(this.policy, this.policy.workspaceRoot)
    return pooled ? this._pool!.take(use) : this._spawn(policy, cwd)
  }

  /** Retained environments for state owners running under `policy` in `cwd`. */
  owners(policy: SandboxExecutionPolicy, cwd: string): RetainedEnvironments {
    const key = policyKey(policy, cwd)
    let owners = this._owners.get(key)
    if (!owners) {
      // Forgotten once its last owner is released, so per-conversation workspaces do not pile up.
      const created: RetainedEnvironments = new RetainedEnvironments(() => this.take(policy, cwd, 'retained'), this._options.idleMs, () => {
        if (this._owners.get(key) === created && created.empty) this._owners.delete(key)
      })
      this._owners.set(key, (owners = created))
    }
    return owners
  }

  /** Ends `owner`'s environments under every policy. */
  async release(owner: object): Promise<void> {
    await Promise.all([...this._owners.values()].map((owners) => owners.release(owner)))
  }

  async releaseAll(): Promise<void> {
    await Promise.all([...this._owners.values()].map((owners) => owners.releaseAll()))
  }

  /** Disposes the pre-spawned helpers; nothing is spawned afterwards by the pool. */
  async drain(): Promise<void> {
    await this._pool?.drain()
  }

  /** `result` with the sandbox facts of a run under `policy`. */
  report(policy: SandboxExecutionPolicy, result: PtcRunResult): PtcRunResult {
    return { ...result, sandbox: sandboxFacts(policy, result) }
  }

  private _spawn(policy: SandboxExecutionPolicy, cwd: string): HelperEnvironment {
    const wrapper = isConfined(policy.mode)
      ? helperWrapper(this._bwrap!, { policy, cwd, runtimePaths: RUNTIME_PATHS })
      : undefined
    return new HelperEnvironment(
      { cwd, ...(wrapper ? { wrapper } : {}) },
      {
        maxOldGenerationSizeMb: this._options.maxOldGenerationSizeMb,
        rehearsal: rehearsalProgram(),
        // Output and completions are capped by maxOutputBytes (JSON-counted); the slack covers
        // escaping and binding-call arguments. Anything longer is over-budget traffic.
        maxFrameBytes: 2 * this._options.maxOutputBytes + 64 * 1024 * 1024,
      },
    )
  }
}

const ABORTED = Symbol('aborted')

/** The message of a run that could not start because its confinement could not be set up. */
export function unavailableMessage(reason: string): string {
  return `the sandbox could not be established, so the program did not run: ${reason}`
}

/**
 * Runs `plan` on `environment` once it is ready. A helper that cannot start fails the run
 * with `sandbox-unavailable` when it was to confine the program (`worker-exit` otherwise):
 * the program never ran, so it is not the program's failure.
 */
export async function executeWhenReady(environment: Environment, plan: RunPlan): Promise<Settlement> {
  if (!(environment instanceof HelperEnvironment)) return execute(environment, plan)
  const signal = plan.signal
  let onAbort: (() => void) | undefined
  const aborted = new Promise<typeof ABORTED>((resolve) => {
    onAbort = () => resolve(ABORTED)
    if (signal?.aborted) resolve(ABORTED)
    else signal?.addEventListener('abort', onAbort, { once: true })
  })
  // The roots are checked from outside once the helper runs: a path swapped while bwrap bound it is refused.
  const problem = (await Promise.race([environment.ready, aborted])) ?? environment.rootsProblem()
  signal?.removeEventListener('abort', onAbort!)
  if (problem === undefined) return execute(environment, plan)
  const ledger = new OutputLedger(plan.maxOutputBytes)
  if (plan.notice) ledger.text(plan.notice)
  const error = problem === ABORTED
    ? { kind: 'abort' as const, message: signal?.reason instanceof Error ? signal.reason.message : String(signal?.reason ?? 'the run was aborted') }
    : environment.confined
      ? { kind: 'sandbox-unavailable' as const, message: unavailableMessage(problem) }
      : { kind: 'worker-exit' as const, message: `the runtime's helper process could not start: ${problem}` }
  return { result: ledger.finish({ error }), reusable: false, workerEnding: false, initializerFailed: false }
}
