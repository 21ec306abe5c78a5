/**
 * The provider's configuration, validated at plugin load. Every field has a default, so
 * `ctx.plugin(WorkerPtcRuntime)` works as is.
 */
import path from 'node:path'
import Schema from 'schemastery'
import { PROGRAM_FORMATS, SANDBOX_MODES } from '../seam/types.js'

/** `setTimeout` clamps longer delays to 1 ms, so no budget may exceed this. */
export const MAX_TIMER_MS = 2_147_483_647

const Sandbox = Schema.object({
  mode: Schema.union(SANDBOX_MODES).required(),
  workspaceRoot: Schema.string(),
  writableRoots: Schema.array(Schema.string()).default([]),
  /** Absent: `'none'` in the confined modes, the host's under `danger-full-access`. */
  network: Schema.union(['none', 'host'] as const),
  /** bubblewrap: an absolute path, or a name looked up on PATH. */
  bwrapPath: Schema.string().default('bwrap'),
})

export const Config = Schema.object({
  /**
   * Where each environment's worker lives: `process` (a helper process of its own, the
   * boundary for untrusted programs) or `thread` (this process; trusted programs only).
   */
  isolation: Schema.union(['process', 'thread'] as const).default('process'),
  timeoutMs: Schema.natural().min(1).max(MAX_TIMER_MS).default(120_000),
  maxTimeoutMs: Schema.natural().min(1).max(MAX_TIMER_MS).default(600_000),
  maxOutputBytes: Schema.natural().min(4).max(Number.MAX_SAFE_INTEGER).default(67_108_864),
  maxOldGenerationSizeMb: Schema.natural().min(8).default(512),
  /** Everything one environment may allocate (heap, buffers, WebAssembly), kernel-enforced per process. */
  maxMemoryMb: Schema.natural().min(64).max(1024 * 1024).default(1024),
  maxPendingCalls: Schema.natural().min(1).default(128),
  /** JSON bytes of the arguments of binding calls in flight at once, per environment. */
  maxPendingCallBytes: Schema.natural().min(1024).max(Number.MAX_SAFE_INTEGER).default(16 * 1024 * 1024),
  cwd: Schema.string(),
  programFormat: Schema.union(PROGRAM_FORMATS).default('function-body'),
  retainState: Schema.boolean().default(false),
  idleMs: Schema.natural().min(1).max(MAX_TIMER_MS).default(15 * 60_000),
  /** How long a held call waits for `resume` before its run fails with a `timeout`. */
  holdTimeoutMs: Schema.natural().min(1).max(MAX_TIMER_MS).default(15 * 60_000),
  poolSize: Schema.natural().max(64).default(1),
  // Optional as a whole; when given, its fields are validated (never() admits only absence).
  sandbox: Schema.union([Sandbox, Schema.never()]),
})

export type WorkerPtcRuntimeConfig = Schemastery.TypeT<typeof Config>
/** The configuration `ctx.plugin(WorkerPtcRuntime, options)` accepts; every field is optional. */
export type WorkerPtcRuntimeOptions = Schemastery.TypeS<typeof Config>

/** The known key closest to `key` (a typo's likely meaning), by edit distance. */
function closest(key: string, known: readonly string[]): string {
  const distance = (a: string, b: string) => {
    let row = Array.from({ length: b.length + 1 }, (_, index) => index)
    for (let i = 1; i <= a.length; i++) {
      const next = [i]
      for (let j = 1; j <= b.length; j++) {
        const same = a[i - 1]!.toLowerCase() === b[j - 1]!.toLowerCase()
        next[j] = Math.min(row[j]! + 1, next[j - 1]! + 1, row[j - 1]! + (same ? 0 : 1))
      }
      row = next
    }
    return row[b.length]!
  }
  return known.reduce((best, candidate) => (distance(key, candidate) < distance(key, best) ? candidate : best))
}

function refuseUnknownKeys(value: object, known: readonly string[], prefix: string): void {
  for (const key of Object.keys(value)) {
    if (!known.includes(key)) throw new TypeError(`config.${prefix}${key} is not a known option; did you mean ${prefix}${closest(key, known)}?`)
  }
}

/** Checks what the schema cannot express; throws naming the field and the rule. */
export function checkConfig(config: WorkerPtcRuntimeConfig): void {
  refuseUnknownKeys(config, Object.keys(Config.dict!), '')
  if (config.sandbox) refuseUnknownKeys(config.sandbox, Object.keys(Sandbox.dict!), 'sandbox.')
  if (config.sandbox && config.isolation === 'thread') {
    throw new TypeError("config.sandbox needs config.isolation 'process': a sandbox confines a helper process, and 'thread' runs programs inside this one")
  }
  const absolute = (field: string, value: string | undefined) => {
    if (value !== undefined && !path.isAbsolute(value)) {
      throw new TypeError(`config.${field} must be an absolute path, got ${JSON.stringify(value)}`)
    }
  }
  absolute('cwd', config.cwd)
  if (config.sandbox) {
    absolute('sandbox.workspaceRoot', config.sandbox.workspaceRoot)
    // The fallback root, the host's working directory, usually holds the host's own code and
    // node_modules: writable, a program could change what the host and later helpers run.
    if (config.sandbox.mode === 'workspace-write' && config.sandbox.workspaceRoot === undefined) {
      throw new TypeError(
        "config.sandbox.workspaceRoot is required when sandbox.mode is 'workspace-write': without it the writable root "
        + "would be the host's working directory, which usually holds the host's own code and node_modules, so a program "
        + 'could change code that runs outside the sandbox later. Name a directory meant for programs to write in.',
      )
    }
    config.sandbox.writableRoots?.forEach((root, index) => absolute(`sandbox.writableRoots[${index}]`, root))
    const { bwrapPath } = config.sandbox
    if (bwrapPath === '' || (bwrapPath.includes('/') && !path.isAbsolute(bwrapPath))) {
      throw new TypeError(`config.sandbox.bwrapPath must be an absolute path or a command name, got ${JSON.stringify(bwrapPath)}`)
    }
  }
}
