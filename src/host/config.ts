/**
 * The provider's configuration, validated at plugin load. Every field has a default, so
 * `ctx.plugin(WorkerPtcRuntime)` works as is.
 */
import path from 'node:path'
import Schema from 'schemastery'

/** `setTimeout` clamps longer delays to 1 ms, so no budget may exceed this. */
export const MAX_TIMER_MS = 2_147_483_647

const Sandbox = Schema.object({
  mode: Schema.union(['read-only', 'workspace-write', 'danger-full-access'] as const).required(),
  workspaceRoot: Schema.string(),
  writableRoots: Schema.array(Schema.string()).default([]),
  /** Absent: `'none'` in the confined modes, the host's under `danger-full-access`. */
  network: Schema.union(['none', 'host'] as const),
  /** bubblewrap: an absolute path, or a name looked up on PATH. */
  bwrapPath: Schema.string().default('bwrap'),
})

export const Config = Schema.object({
  timeoutMs: Schema.natural().min(1).max(MAX_TIMER_MS).default(120_000),
  maxTimeoutMs: Schema.natural().min(1).max(MAX_TIMER_MS).default(600_000),
  maxOutputBytes: Schema.natural().min(4).max(Number.MAX_SAFE_INTEGER).default(67_108_864),
  maxOldGenerationSizeMb: Schema.natural().min(8).default(512),
  maxPendingCalls: Schema.natural().min(1).default(128),
  cwd: Schema.string(),
  programFormat: Schema.union(['function-body', 'script', 'repl', 'scoped-repl'] as const).default('function-body'),
  retainState: Schema.boolean().default(false),
  idleMs: Schema.natural().min(1).max(MAX_TIMER_MS).default(15 * 60_000),
  poolSize: Schema.natural().max(64).default(1),
  // Optional as a whole; when given, its fields are validated (never() admits only absence).
  sandbox: Schema.union([Sandbox, Schema.never()]),
})

export type WorkerPtcRuntimeConfig = Schemastery.TypeT<typeof Config>
/** The configuration `ctx.plugin(WorkerPtcRuntime, options)` accepts; every field is optional. */
export type WorkerPtcRuntimeOptions = Schemastery.TypeS<typeof Config>

/** Checks what the schema cannot express; throws naming the field and the rule. */
export function checkConfig(config: WorkerPtcRuntimeConfig): void {
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
