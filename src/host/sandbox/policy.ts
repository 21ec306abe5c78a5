/**
 * Sandbox policies: validation at the boundary, the key that says which helper may serve a
 * run, and the facts every result of a policy run carries. Nothing here starts processes.
 */
import { realpathSync, statSync } from 'node:fs'
import path from 'node:path'
import type { PtcRunResult, PtcRunSandbox, SandboxExecutionPolicy, SandboxMode } from '../../seam/types.js'

const MODES: ReadonlySet<string> = new Set<SandboxMode>(['read-only', 'workspace-write', 'danger-full-access'])

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

/**
 * Checks a policy and returns its canonical copy: a known mode, an existing absolute
 * workspace root, and (for `workspace-write` only, the one mode they affect) existing absolute
 * writable roots. Throws naming `field` and the rule.
 */
export function checkPolicy(policy: unknown, field: string): SandboxExecutionPolicy {
  if (typeof policy !== 'object' || policy === null) throw new TypeError(`${field} must be an object`)
  const { mode, workspaceRoot, writableRoots } = policy as Record<string, unknown>
  if (typeof mode !== 'string' || !MODES.has(mode)) {
    throw new TypeError(`${field}.mode must be one of ${[...MODES].join(', ')}, got ${JSON.stringify(mode)}`)
  }
  const root = existingDirectory(workspaceRoot, `${field}.workspaceRoot`)
  if (writableRoots !== undefined && !Array.isArray(writableRoots)) {
    throw new TypeError(`${field}.writableRoots must be an array of absolute paths`)
  }
  const roots = mode === 'workspace-write'
    ? (writableRoots ?? []).map((entry, index) => existingDirectory(entry, `${field}.writableRoots[${index}]`))
    : []
  return { mode: mode as SandboxMode, workspaceRoot: root, writableRoots: roots }
}

const writableRoots = (policy: SandboxExecutionPolicy) =>
  policy.mode === 'workspace-write' ? [policy.workspaceRoot, ...(policy.writableRoots ?? [])] : []

/**
 * `policy` with its roots replaced by their real paths. For the deployment's own policy only:
 * a symlink the host wrote into its configuration is the host's intent, so it is followed once,
 * at plugin load, and the sandbox binds what it led to then.
 */
export function resolveRoots(policy: SandboxExecutionPolicy): SandboxExecutionPolicy {
  return { ...policy, workspaceRoot: realpathSync(policy.workspaceRoot), writableRoots: (policy.writableRoots ?? []).map((root) => realpathSync(root)) }
}

/**
 * Why the writable roots of `policy` cannot be bound as given, or `undefined` when they can;
 * checked at every run. A root whose path passes through a symlink is refused: a program
 * that can write where the symlink lies (another run's writable root) could have planted it
 * to redirect this run's writes outside the tree.
 */
export function checkRoots(policy: SandboxExecutionPolicy): string | undefined {
  for (const root of writableRoots(policy)) {
    let resolved: string
    try {
      resolved = realpathSync(root)
    } catch {
      return `the writable root ${root} no longer exists`
    }
    if (resolved !== root) return `the writable root ${root} passes through a symlink (to ${resolved}); writable roots must be real paths`
  }
  return undefined
}

/** Identifies the helpers that may serve a run: same policy, same working directory. */
export function policyKey(policy: SandboxExecutionPolicy, cwd: string): string {
  return JSON.stringify([policy.mode, policy.workspaceRoot, policy.writableRoots ?? [], cwd])
}

/**
 * The sandbox facts of a result. `enforcement: 'full'` means bubblewrap confined the run;
 * it is absent for `danger-full-access` and when the sandbox could not be established (the
 * program did not run). `denied` is true only when the failure text carries a denial.
 */
export function sandboxFacts(mode: SandboxMode, result: PtcRunResult): PtcRunSandbox {
  const kind = result.error?.kind
  const enforced = isConfined(mode) && kind !== 'sandbox-unavailable'
  const denied = enforced && result.error !== undefined && DENIAL.test(result.error.message)
  return enforced ? { mode, denied, enforcement: 'full' } : { mode, denied }
}
