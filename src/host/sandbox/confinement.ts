/**
 * The deployment's sandbox: its default policy, whether bubblewrap works here, the command
 * line that confines a helper under a policy, and the sandbox facts every result of a policy
 * run carries. Created only when the deployment configures `sandbox`; it starts no process
 * but the start-up probe.
 */
import type { PtcRunResult, SandboxExecutionPolicy, SandboxMode, SandboxNetwork } from '../../seam/types.js'
import { type HelperWrapper, helperWrapper, locateBwrap, probeBwrap } from './bwrap.js'
import { checkPolicy, checkRoots, isConfined, policyInstructions, resolveRoots, sandboxFacts } from './policy.js'
import { RUNTIME_PATHS } from './runtime-files.js'

/** The deployment's `sandbox` configuration, after schema defaults. */
export interface SandboxConfig {
  mode: SandboxMode
  workspaceRoot?: string
  writableRoots?: string[]
  network?: SandboxNetwork
  bwrapPath: string
}

export class Sandbox {
  /** The deployment default, applied to requests without an explicit policy. */
  readonly policy: SandboxExecutionPolicy
  private _bwrap: string | undefined
  private _problem: string | undefined = 'the sandbox has not started'

  constructor(
    private readonly _config: SandboxConfig,
    cwd: string,
  ) {
    this.policy = resolveRoots(checkPolicy({ ..._config, workspaceRoot: _config.workspaceRoot ?? cwd }, 'config.sandbox'))
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

  /** Finds bubblewrap and checks, once, that it can confine a process on this machine. */
  async start(): Promise<void> {
    if (process.platform !== 'linux') {
      this._problem = `bubblewrap confinement needs Linux, this is ${process.platform}`
      return
    }
    this._bwrap = locateBwrap(this._config.bwrapPath)
    this._problem = this._bwrap
      ? await probeBwrap(this._bwrap)
      : `bubblewrap was not found (sandbox.bwrapPath is ${JSON.stringify(this._config.bwrapPath)})`
  }

  /** Why runs under `policy` cannot be confined here, or `undefined` when they can. */
  unavailable(policy: SandboxExecutionPolicy): string | undefined {
    return isConfined(policy.mode) ? this._problem ?? checkRoots(policy) : undefined
  }

  /** The wrapper that confines a helper under `policy`; `undefined` when it runs unconfined. */
  wrapper(policy: SandboxExecutionPolicy): HelperWrapper | undefined {
    if (!isConfined(policy.mode)) return undefined
    return helperWrapper(this._bwrap!, { policy, cwd: policy.workspaceRoot, runtimePaths: RUNTIME_PATHS })
  }

  /** `result` with the sandbox facts of a run under `policy`. */
  report(policy: SandboxExecutionPolicy, result: PtcRunResult): PtcRunResult {
    return { ...result, sandbox: sandboxFacts(policy, result) }
  }
}

/** The message of a run that could not start because its confinement could not be set up. */
export function unavailableMessage(reason: string): string {
  return `the sandbox could not be established, so the program did not run: ${reason}`
}
