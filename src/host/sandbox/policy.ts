/**
 * Sandbox policies: validation at the boundary, the key that says which helper may serve a
 * run, and the facts every result of a policy run carries. Nothing here starts processes.
 */
import { realpathSync, statSync } from 'node:fs'
import path from 'node:path'
import { SANDBOX_MODES, type PtcRunResult, type PtcRunSandbox, type SandboxEgress, type SandboxExecutionPolicy, type SandboxMode, type SandboxNetwork } from '../../seam/types.js'
import { checkEgress } from '../egress/broker.js'

const MODES: ReadonlySet<string> = new Set(SANDBOX_MODES)
const NETWORKS: ReadonlySet<string> = new Set(['none', 'host'])

/**
 * What a failure message looks like when bubblewrap's read-only mounts or the dropped
 * capabilities refused an operation. A diagnostic for the caller, never a policy input.
 */
const DENIAL = /\bEROFS\b|\bEACCES\b|read-only file system|permission denied/i

/** Whether runs under `mode` execute inside bubblewrap (and therefore need it). */
export function isConfined(mode: SandboxMode): boolean {
  return mode !== 'danger-full-access'
}

function existingDirectory(value: unknown, field: string): string {
  if (typeof value !== 'string' || !path.isAbsolute(value)) {
    throw new TypeError(`${field} must be an absolute path, got ${JSON.stringify(value)}`)
  }
  let directory = false
  try {
    directory = statSync(value).isDirectory()
  } catch {
    // reported below
  }
  if (!directory) throw new Error(`${field} must be an existing directory, got ${JSON.stringify(value)}`)
  return path.resolve(value)
}

/** The brokered egress a policy names, if any. */
function egressOf(policy: SandboxExecutionPolicy): SandboxEgress | undefined {
  return typeof policy.network === 'object' ? policy.network : undefined
}

/**
 * The network of a policy: as given, `'none'` by default when confined, always the host's
 * otherwise. An egress object is checked and copied; it needs a confined mode, whose private
 * network namespace is what makes the broker the only way out.
 */
function checkNetwork(network: unknown, mode: SandboxMode, field: string): SandboxNetwork {
  if (typeof network === 'object' && network !== null && !Array.isArray(network)) {
    if (!isConfined(mode)) throw new TypeError(`${field}.network cannot name hosts under danger-full-access, which confines nothing`)
    return checkEgress(network as Record<string, unknown>, `${field}.network`)
  }
  if (network !== undefined && (typeof network !== 'string' || !NETWORKS.has(network))) {
    throw new TypeError(`${field}.network must be one of ${[...NETWORKS].join(', ')}, got ${JSON.stringify(network)}, or an object { allow: [hosts] }`)
  }
  if (isConfined(mode)) return (network as SandboxNetwork | undefined) ?? 'none'
  if (network === 'none') throw new TypeError(`${field}.network cannot be "none" under danger-full-access, which confines nothing`)
  return 'host'
}

/**
 * Checks a policy and returns its canonical copy: a known mode, an existing absolute
 * workspace root, (for `workspace-write` only, the one mode they affect) existing absolute
 * writable roots, and the network. Throws naming `field` and the rule.
 */
export function checkPolicy(policy: unknown, field: string): SandboxExecutionPolicy {
  if (typeof policy !== 'object' || policy === null) throw new TypeError(`${field} must be an object`)
  const { mode, workspaceRoot, writableRoots, readableRoots, network } = policy as Record<string, unknown>
  if (typeof mode !== 'string' || !MODES.has(mode)) {
    throw new TypeError(`${field}.mode must be one of ${[...MODES].join(', ')}, got ${JSON.stringify(mode)}`)
  }
  const root = existingDirectory(workspaceRoot, `${field}.workspaceRoot`)
  if (writableRoots !== undefined && !Array.isArray(writableRoots)) {
    throw new TypeError(`${field}.writableRoots must be an array of absolute paths`)
  }
  if (readableRoots !== undefined && !Array.isArray(readableRoots)) {
    throw new TypeError(`${field}.readableRoots must be an array of absolute paths`)
  }
  const roots = mode === 'workspace-write'
    ? (writableRoots ?? []).map((entry, index) => existingDirectory(entry, `${field}.writableRoots[${index}]`))
    : []
  const readable = isConfined(mode as SandboxMode)
    ? (readableRoots ?? []).map((entry, index) => existingDirectory(entry, `${field}.readableRoots[${index}]`))
    : []
  return {
    mode: mode as SandboxMode,
    workspaceRoot: root,
    writableRoots: roots,
    readableRoots: readable,
    network: checkNetwork(network, mode as SandboxMode, field),
  }
}

/**
 * `policy` with its roots replaced by their real paths. For the deployment's own policy only:
 * a symlink the host wrote into its configuration is the host's intent, so it is followed once,
 * at plugin load, and the sandbox binds what it led to then.
 */
export function resolveRoots(policy: SandboxExecutionPolicy): SandboxExecutionPolicy {
  const real = (roots: string[] | undefined) => (roots ?? []).map((root) => realpathSync(root))
  return { ...policy, workspaceRoot: realpathSync(policy.workspaceRoot), writableRoots: real(policy.writableRoots), readableRoots: real(policy.readableRoots) }
}

/**
 * A policy as one run carries it from admission to its result: resolved and checked once, with
 * what the run path needs of it worked out then, not again at each step.
 */
export interface RunPolicy {
  readonly policy: SandboxExecutionPolicy
  /** Which environments may serve the run (`policyKey`): a run policy is its environments' key. */
  readonly id: string
  /** The brokered egress it names, if any. */
  readonly egress: SandboxEgress | undefined
  /** Whether it confines the program (every mode but `danger-full-access`). */
  readonly confined: boolean
  /** The sandbox facts of a result without a failure, which are the policy's alone. */
  readonly facts: PtcRunSandbox
  /** A failed result of the run with the facts of its sandbox (`sandboxFacts`: a failure's message may carry a denial). */
  readonly report: (result: PtcRunResult) => PtcRunResult
}

/** The deployment's policy is one frozen object every run of it carries: worked out once. */
const runPolicies = new WeakMap<SandboxExecutionPolicy, RunPolicy>()

/** `policy`, as a run carries it. */
export function runPolicy(policy: SandboxExecutionPolicy): RunPolicy {
  let run = runPolicies.get(policy)
  if (run === undefined) {
    const report = (result: PtcRunResult): PtcRunResult => ({ ...result, sandbox: sandboxFacts(policy, result) })
    run = { policy, id: policyKey(policy), egress: egressOf(policy), confined: isConfined(policy.mode), facts: sandboxFacts(policy, { output: [], calls: [] }), report }
    if (Object.isFrozen(policy)) runPolicies.set(policy, run)
  }
  return run
}

/** Identifies the environments that may serve a run: same policy (each run sets its own cwd). */
export function policyKey(policy: SandboxExecutionPolicy): string {
  return JSON.stringify([policy.mode, policy.workspaceRoot, policy.writableRoots ?? [], policy.readableRoots ?? [], policy.network])
}

/**
 * One paragraph for `executionInstructions` about what `policy` lets programs do; `scratch` is
 * its private scratch directory, when it has one, and `cwd` where runs start.
 */
export function policyInstructions(policy: SandboxExecutionPolicy, scratch?: string, cwd = policy.workspaceRoot): string {
  const { mode, workspaceRoot, writableRoots = [], network } = policy
  // The scratch directory's path differs from one environment to the next: it is not named.
  const start = cwd === scratch ? 'The working directory is a scratch directory of this environment, empty at first.' : `The working directory is ${cwd}.`
  if (mode === 'danger-full-access') return `${start} Files and network are not sandboxed.`
  const denied = 'fail with EROFS (read-only file system); subprocesses are confined the same way'
  const roots = mode === 'workspace-write' ? [workspaceRoot, ...writableRoots].filter((root) => root !== scratch) : []
  if (scratch !== undefined) roots.push(cwd === scratch ? 'the working directory' : `${scratch} (a scratch directory of this environment)`)
  const files = roots.length === 0
    ? `The file system is read-only apart from /tmp (private to this environment): other writes ${denied}.`
    : `You may write only inside ${roots.join(', ')} and /tmp (private to this environment); other writes ${denied}.`
  const hidden = 'The user\'s home directory is not visible.'
  const reach = network === 'host'
    ? 'The network is reachable, but unix sockets cannot be created (EPERM).'
    : typeof network === 'object'
      ? `Only fetch() reaches the network, and only these hosts: ${network.allow.join(', ')}; other connections fail, and unix sockets cannot be created (EPERM).`
      : 'There is no network (connections fail) and unix sockets cannot be created (EPERM).'
  return `${start} ${files} ${hidden} ${reach}`
}

/**
 * The sandbox facts of a result. `enforcement: 'full'` means bubblewrap confined the run;
 * it is absent for `danger-full-access` and when the sandbox could not be established (the
 * program did not run). `denied` is true only when the failure text carries a denial.
 */
export function sandboxFacts(policy: SandboxExecutionPolicy, result: PtcRunResult): PtcRunSandbox {
  const { mode } = policy
  const network = typeof policy.network === 'object' ? 'brokered' : policy.network ?? (isConfined(mode) ? 'none' : 'host')
  const kind = result.error?.kind
  const enforced = isConfined(mode) && kind !== 'sandbox-unavailable'
  const denied = enforced && result.error !== undefined && DENIAL.test(result.error.message)
  return enforced ? { mode, network, denied, enforcement: 'full' } : { mode, network, denied }
}
