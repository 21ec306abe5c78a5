/**
 * The deployment's sandbox: its default policy, whether bubblewrap works here, the command
 * line that confines a helper under a policy, and the sandbox facts every result of a policy
 * run carries. Every process-host deployment has one unless it configures `sandbox: 'none'`;
 * it starts no process but the start-up probe, and owns the empty host directory at which each
 * environment's private scratch directory is mounted.
 */
import { lstatSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import type { PtcRunResult, SandboxExecutionPolicy, SandboxMode, SandboxNetwork } from '../../seam/types.js'
import { locateCommand } from '../../system/commands.js'
import { type HelperWrapper, helperWrapper, probeBwrap, writableRoots } from './bwrap.js'
import { type RunPolicy, checkPolicy, isConfined, policyInstructions, policyKey, resolveRoots, runPolicy } from './policy.js'
import { privatePlaces, within } from './places.js'
import { repositoryMetadata } from './repositories.js'
import { DEPENDENCY_PATHS, RUNTIME_PATHS } from './runtime-files.js'
import { pyodidePaths } from '../../python/snapshot.js'

/** How many policies' wrappers are kept: a deployment uses a few; callers naming many get the oldest recomputed. */
const WRAPPERS_KEPT = 32

/** The deployment's `sandbox` configuration, after schema defaults. */
export interface SandboxConfig {
  mode: SandboxMode
  workspaceRoot?: string
  writableRoots?: string[]
  readableRoots?: string[]
  network?: SandboxNetwork
  bwrapPath: string
}

/** The configuration of a deployment that leaves `sandbox` out: the default confinement. */
export const DEFAULT_SANDBOX: SandboxConfig = { mode: 'workspace-write', bwrapPath: 'bwrap' }

/** A run's policy as admission resolved it, with why it cannot be confined here, if it cannot. */
export interface AdmittedPolicy extends RunPolicy {
  readonly unavailable: string | undefined
}

export class Sandbox {
  /** The deployment default, applied to requests without an explicit policy. */
  readonly policy: SandboxExecutionPolicy
  /** The deployment's policy as its runs carry it, worked out once. */
  readonly deployment: RunPolicy
  /**
   * Where runs of the default policy start: the deployment's `cwd` when it names one (shown
   * read-only), otherwise the workspace root.
   */
  readonly defaultCwd: string
  /**
   * An empty host directory at which each environment without a workspace of its own mounts
   * its private scratch directory (an empty tmpfs): see `scratchMountPoint`.
   */
  readonly scratch: string | undefined
  /** The scratch mount point is this runtime's own, removed at disposal. */
  private _ownsScratch = false
  private _bwrap: string | undefined
  private _problem: string | undefined = 'the sandbox has not started'
  /** Wrappers by policy, host cwd and repository metadata found: computed once, not per helper. */
  private readonly _wrappers = new Map<string, HelperWrapper>()

  /**
   * `cwd` is the deployment's own `cwd` setting, when it has one; `tmpfsBytes` the size of each
   * writable private tmpfs.
   */
  constructor(
    private readonly _config: SandboxConfig,
    cwd: string | undefined,
    private readonly _tmpfsBytes: number,
  ) {
    if (_config.workspaceRoot === undefined) ({ path: this.scratch, owned: this._ownsScratch } = scratchMountPoint())
    const readableRoots = [...(_config.readableRoots ?? []), ...(cwd !== undefined && _config.workspaceRoot === undefined ? [cwd] : [])]
    const workspaceRoot = _config.workspaceRoot ?? this.scratch!
    // Frozen: every spec of the deployment's policy carries this very object, and a run carrying it
    // unchanged needs no second check.
    this.policy = deepFreeze(resolveRoots(checkPolicy({ ..._config, workspaceRoot, readableRoots }, 'config.sandbox')))
    this.defaultCwd = _config.workspaceRoot === undefined && cwd !== undefined ? this.policy.readableRoots!.at(-1)! : this.policy.workspaceRoot
    this.deployment = runPolicy(this.policy)
  }

  /** One paragraph for `executionInstructions` about what the default policy lets programs do. */
  get instructions(): string {
    return policyInstructions(this.policy, this._scratchOf(this.policy), this.defaultCwd)
  }

  /** The scratch directory of environments under `policy`, if it has one (its workspace root is the scratch mount point). */
  private _scratchOf(policy: SandboxExecutionPolicy): string | undefined {
    return this.scratch !== undefined && policy.workspaceRoot === this.scratch ? this.scratch : undefined
  }

  /** Removes the scratch mount point if it is this runtime's own; call once no helper runs any more. */
  dispose(): void {
    if (this.scratch !== undefined && this._ownsScratch) rmSync(this.scratch, { recursive: true, force: true })
  }

  /**
   * The canonical policy for a request: its explicit one (validated; errors name `field`) or
   * the deployment's.
   */
  resolvePolicy(policy: unknown, field: string): SandboxExecutionPolicy {
    return policy === undefined || policy === this.policy ? this.policy : checkPolicy(policy, field)
  }

  /**
   * The policy of a run of the deployment's own policy in the host-named `cwd`, and the cwd it
   * starts in: a cwd the policy hides (under the host user's home, the host's working directory,
   * `/tmp` and the other private places) is shown read-only at its real path, as a `cwd` named in
   * the configuration is; one the policy already shows leaves it as it is.
   */
  showingCwd(policy: SandboxExecutionPolicy, cwd: string): { policy: SandboxExecutionPolicy; cwd: string } {
    const resolved = realpathSync(cwd)
    const roots = [policy.workspaceRoot, ...(policy.writableRoots ?? []), ...(policy.readableRoots ?? [])]
    if (!isConfined(policy.mode) || roots.some((root) => within(resolved, root))) return { policy, cwd }
    if (!privatePlaces().some((place) => within(resolved, place.path))) return { policy, cwd }
    return { policy: { ...policy, readableRoots: [...(policy.readableRoots ?? []), resolved] }, cwd: resolved }
  }

  /** Finds bubblewrap and checks, once, that it can confine a process on this machine. */
  async start(): Promise<void> {
    if (process.platform !== 'linux') {
      this._problem = `bubblewrap confinement needs Linux, this is ${process.platform}`
      return
    }
    this._bwrap = locateCommand(this._config.bwrapPath)
    const problem = this._bwrap
      ? await probeBwrap(this._bwrap)
      : `bubblewrap was not found (sandbox.bwrapPath is ${JSON.stringify(this._config.bwrapPath)}); install it (apt-get install bubblewrap, dnf install bubblewrap, apk add bubblewrap)`
    this._problem = problem && `${problem}${userNamespaceAdvice(problem)}. ${OPT_OUT}`
  }

  /**
   * A run's policy, resolved once at admission and carried to its result: the spec's explicit
   * one (validated; errors name `field`) or the deployment's, and why it cannot be confined here
   * (the roots are checked at every run).
   */
  admit(policy: unknown, field: string): AdmittedPolicy {
    const run = policy === undefined || policy === this.policy ? this.deployment : runPolicy(checkPolicy(policy, field))
    return { ...run, unavailable: this.unavailable(run) }
  }

  /**
   * Why the deployment's own runs could not be confined here, checked once as the runtime starts:
   * what `unavailable` says, or a writable root past what the host reads for repositories at a
   * helper's start (repositories.ts), which would otherwise fail every run in front of the model.
   */
  startProblem(): string | undefined {
    const problem = this.unavailable(this.deployment)
    if (problem !== undefined || !this.deployment.confined) return problem
    try {
      this._metadataOf(this.policy)
      return undefined
    } catch (error) {
      return (error as Error).message
    }
  }

  /** The repository metadata in the writable roots of `policy`, read now; throws past repositories.ts's bounds. */
  private _metadataOf(policy: SandboxExecutionPolicy): string[] {
    return writableRoots(policy, this._scratchOf(policy)).flatMap(repositoryMetadata)
  }

  /** Why runs under `run` cannot be confined here, or `undefined` when they can. */
  unavailable(run: RunPolicy): string | undefined {
    return run.confined ? this._problem ?? checkRoots(run.policy) : undefined
  }

  /**
   * The wrapper that confines a helper under `policy`; `undefined` when it runs unconfined.
   * Computed once per policy and reused: only the repository metadata in its writable roots is
   * looked for at every helper start (a `.git` that appeared since is then protected too).
   */
  wrapper(policy: SandboxExecutionPolicy): HelperWrapper | undefined {
    if (!isConfined(policy.mode)) return undefined
    const scratch = this._scratchOf(policy)
    // Pyodide's directory joins once a Python runtime has found it.
    const runtimePaths = [...RUNTIME_PATHS, ...pyodidePaths()]
    // Read once: the wrapper binds exactly the metadata it is kept under. A program moving a
    // repository between two readings had a wrapper that did not bind it kept under metadata
    // naming it, for every later start that found it in place.
    const metadata = this._metadataOf(policy)
    const key = JSON.stringify([policyKey(policy), process.cwd(), metadata, runtimePaths])
    let wrapper = this._wrappers.get(key)
    if (!wrapper) {
      wrapper = helperWrapper(this._bwrap!, {
        policy,
        cwd: policy.workspaceRoot,
        runtimePaths,
        protectedPaths: DEPENDENCY_PATHS,
        tmpfsBytes: this._tmpfsBytes,
        metadata,
        ...(scratch === undefined ? {} : { scratch }),
      })
      if (this._wrappers.size >= WRAPPERS_KEPT) this._wrappers.delete(this._wrappers.keys().next().value!)
      this._wrappers.set(key, wrapper)
    }
    return wrapper
  }
}

/** The roots of `policy` that a helper binds, each with what it is called in a refusal. */
const boundRoots = (policy: SandboxExecutionPolicy): Array<[string, string]> => [
  [policy.mode === 'workspace-write' ? 'writable root' : 'workspace root', policy.workspaceRoot],
  ...(policy.mode === 'workspace-write' ? (policy.writableRoots ?? []).map((root): [string, string] => ['writable root', root]) : []),
  ...(policy.readableRoots ?? []).map((root): [string, string] => ['readable root', root]),
]

/**
 * Why the roots of `policy` cannot be bound as given, or `undefined` when they can; checked at
 * every run. A root whose path passes through a symlink is refused: a program that can write
 * where the symlink lies (another run's writable root) could have planted it to redirect this
 * run's writes outside the tree, or to show it a hidden place (the host's working directory).
 * The deployment's own roots were resolved as it loaded.
 */
function checkRoots(policy: SandboxExecutionPolicy): string | undefined {
  for (const [kind, root] of boundRoots(policy)) {
    let resolved: string
    try {
      resolved = realpathSync(root)
    } catch {
      return `the ${kind} ${root} no longer exists`
    }
    if (resolved !== root) return `the ${kind} ${root} passes through a symlink (to ${resolved}); roots must be real paths`
  }
  return undefined
}

/** The message of a run that could not start because its confinement could not be set up. */
export function unavailableMessage(reason: string): string {
  return `the sandbox could not be established, so the program did not run: ${reason}`
}

/** The message of a runtime that did not start because its deployment's own policy cannot be confined here. */
export function startFailureMessage(reason: string): string {
  return `the sandbox could not be established, so the runtime did not start: ${reason}`
}

/**
 * The host directory at which environments mount their scratch directories. It only ever
 * serves as a mount point, so every runtime of this user shares one, `ptc-scratch-<uid>` in the
 * temporary directory, made once and never removed (a runtime that ends without disposal leaves
 * nothing behind). Only a directory this user owns and nobody else may enter will do; should
 * another user have taken the name, this runtime makes a private one and removes it at disposal.
 * A real path: the policy's roots are resolved, and the scratch is told apart by its path.
 */
function scratchMountPoint(): { path: string; owned: boolean } {
  const uid = process.getuid?.()
  const shared = path.join(os.tmpdir(), `ptc-scratch-${uid ?? 'user'}`)
  try {
    mkdirSync(shared, { mode: 0o700 })
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error
  }
  const stat = lstatSync(shared)
  if (stat.isDirectory() && stat.uid === uid && (stat.mode & 0o077) === 0) return { path: realpathSync(shared), owned: false }
  return { path: realpathSync(mkdtempSync(path.join(os.tmpdir(), 'ptc-scratch-'))), owned: true }
}

/** How the deployer can do without confinement, for a machine where bubblewrap cannot work. */
const OPT_OUT =
  "To run each environment in a container instead, build its image (npx ptc-runtime-image) and configure isolation: 'container'; " +
  "to run programs unconfined instead (they can then read and write whatever this user can, and reach the network), configure sandbox: 'none'"

/**
 * Why bubblewrap may fail here although installed: Ubuntu 24.04 and later let AppArmor forbid
 * unprivileged user namespaces, which bubblewrap (not setuid) needs.
 */
function userNamespaceAdvice(problem: string): string {
  let restricted = false
  try {
    restricted = readFileSync('/proc/sys/kernel/apparmor_restrict_unprivileged_userns', 'utf8').trim() === '1'
  } catch {
    // no such restriction on this kernel
  }
  if (!restricted || problem.includes('was not found')) return ''
  return '. AppArmor forbids unprivileged user namespaces here (kernel.apparmor_restrict_unprivileged_userns = 1, the default of '
    + 'Ubuntu 24.04): give bwrap an AppArmor profile that allows them ("userns,"), or set that sysctl to 0'
}

/** `value` and everything it holds, frozen (a checked policy: plain objects, arrays and strings). */
function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    for (const key of Object.keys(value)) deepFreeze((value as Record<string, unknown>)[key])
    Object.freeze(value)
  }
  return value
}
