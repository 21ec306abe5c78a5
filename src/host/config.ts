/**
 * The provider's configuration, validated at plugin load. Every field has a default, so
 * `ctx.plugin(WorkerPtcRuntime)` works as is.
 */
import path from 'node:path'
import Schema from 'schemastery'
import { durableKeys } from './durable/record.js'
import type { PtcDurableStore } from './durable/store.js'
import { PROGRAM_FORMATS, PROGRAM_LANGUAGES, SANDBOX_MODES } from '../seam/types.js'
import type { WorkerPtcRuntimeOptions } from './options.js'
import { TIER_NAMES } from './environments/tiers.js'
import type { PtcSandboxProvider, PtcStreamFactory } from './environments/stream/provider.js'

/** `setTimeout` clamps longer delays to 1 ms, so no budget may exceed this. */
export const MAX_TIMER_MS = 2_147_483_647

const Sandbox = Schema.object({
  /** Absent: `'workspace-write'`, whose workspace is a private scratch directory unless `workspaceRoot` names one. */
  mode: Schema.union(SANDBOX_MODES).default('workspace-write'),
  /** Absent: a private scratch directory of each environment (an empty tmpfs). */
  workspaceRoot: Schema.string(),
  writableRoots: Schema.array(Schema.string()).default([]),
  /** Directories shown read-only where a confined program otherwise sees nothing (home, the host's cwd, /tmp). */
  readableRoots: Schema.array(Schema.string()).default([]),
  /**
   * Absent: `'none'` in the confined modes, the host's under `danger-full-access`. An object
   * brokers the program's `fetch` to the hosts it allows (`SandboxEgress`).
   */
  network: Schema.union([
    'none',
    'host',
    Schema.object({ allow: Schema.array(Schema.string()).required(), headers: Schema.dict(Schema.dict(Schema.string())) }),
  ] as const),
  /** bubblewrap: an absolute path, or a name looked up on PATH. */
  bwrapPath: Schema.string().default('bwrap'),
})

const Container = Schema.object({
  /** `podman` or `docker`, or a path to either. Absent: the first of them on PATH. */
  engine: Schema.string(),
  /** Absent: the image `ptc-runtime-image` builds for this package's version. */
  image: Schema.string(),
  /** The OCI runtime (`--runtime`). Absent: the first that runs the image here, of gVisor's `runsc` where installed, the engine's own, runc and crun. */
  runtime: Schema.string(),
  /** More arguments for `run`, before the image (mounts, `--ulimit`, ...). Without `--ulimit`, the host's own hard limits are added where the engine's defaults are refused. */
  args: Schema.array(Schema.string()),
})

export const Config = Schema.object({
  /**
   * Where each environment's worker lives: `process` (a helper process of its own, the
   * boundary for untrusted programs), `thread` (this process; trusted programs only),
   * `container` (a helper in a container of its own, `container` options), `plain` (a helper
   * process with no confinement, the smallest tier; trusted programs only), or
   * `{ provider }` (a helper in a sandbox the deployer's provider acquires per environment), or
   * `{ stream }` (a helper at the far end of a byte stream the deployer opens per environment).
   */
  isolation: Schema.union([
    ...TIER_NAMES,
    Schema.object({ provider: Schema.any().required() as Schema<PtcSandboxProvider> }),
    Schema.object({ stream: Schema.function().required() as Schema<PtcStreamFactory> }),
  ]).default('process'),
  /** The container tier's engine and image (`isolation: 'container'`); never() admits only absence. */
  container: Schema.union([Container, Schema.never()]),
  timeoutMs: Schema.natural().min(1).max(MAX_TIMER_MS).default(120_000),
  maxTimeoutMs: Schema.natural().min(1).max(MAX_TIMER_MS).default(600_000),
  maxOutputBytes: Schema.natural().min(4).max(Number.MAX_SAFE_INTEGER).default(67_108_864),
  /**
   * UTF-8 bytes of one program. The host parses and lowers a program on its own thread (about
   * a millisecond per few KiB), so a longer one is refused before the host reads it.
   */
  maxProgramBytes: Schema.natural().min(1024).max(Number.MAX_SAFE_INTEGER).default(64 * 1024),
  maxOldGenerationSizeMb: Schema.natural().min(8).default(512),
  /** Everything one environment may allocate (heap, buffers, WebAssembly), kernel-enforced per process. */
  maxMemoryMb: Schema.natural().min(64).max(1024 * 1024).default(1024),
  /**
   * Processes and threads one environment may have at once; a program that starts more fails
   * with `worker-exit` (a fork bomb ends there).
   */
  maxProcesses: Schema.natural().min(32).max(65_536).default(512),
  maxPendingCalls: Schema.natural().min(1).default(128),
  /** JSON bytes of the arguments of binding calls in flight at once, per environment. */
  maxPendingCallBytes: Schema.natural().min(1024).max(Number.MAX_SAFE_INTEGER).default(16 * 1024 * 1024),
  /**
   * Binding calls one run may start (a request's `maxCalls` overrides it). 1 000 lets a program
   * walk a few pages of results one call per item, and stops a runaway loop long before it
   * floods the tools behind the bindings.
   */
  maxCalls: Schema.natural().min(1).max(Number.MAX_SAFE_INTEGER).default(1000),
  /**
   * Bytes of response bodies the egress broker holds at once for one environment's fetches in
   * flight (each fetch is also capped at 4 MiB); a fetch whose answer would pass it fails,
   * naming this option.
   */
  maxFetchBytesInFlight: Schema.natural().min(1024).max(Number.MAX_SAFE_INTEGER).default(16 * 1024 * 1024),
  /** The same for every environment's fetches together: what brokered egress may hold on the host. */
  maxHostFetchBytesInFlight: Schema.natural().min(1024).max(Number.MAX_SAFE_INTEGER).default(128 * 1024 * 1024),
  /** JSON bytes one binding call may resolve; a tool's own `maxResultBytes` may lower it. */
  maxCallResultBytes: Schema.natural().min(1).max(Number.MAX_SAFE_INTEGER).default(16 * 1024 * 1024),
  cwd: Schema.string(),
  programFormat: Schema.union(PROGRAM_FORMATS).default('function-body'),
  /** `typescript`: programs may carry types, erased before they run (by SWC's eraser, as Node erases them). `python`: programs run in Pyodide (the optional peer `pyodide`) inside the environment. */
  language: Schema.union(PROGRAM_LANGUAGES).default('javascript'),
  retainState: Schema.boolean().default(false),
  idleMs: Schema.natural().min(1).max(MAX_TIMER_MS).default(15 * 60_000),
  /** How long a held call waits for `resume` before its run fails with a `timeout`. */
  holdTimeoutMs: Schema.natural().min(1).max(MAX_TIMER_MS).default(15 * 60_000),
  poolSize: Schema.natural().max(64).default(1),
  /**
   * Memory the pool's spares may hold when it grows beyond `poolSize` under demand (runs
   * arriving faster than it refills), in MB, each spare counted at its tier's measured size
   * (16 MB for a helper process). 256 lets the default tier keep 16 helpers ready in a burst;
   * `poolSize` spares are kept whatever this says. The thread tier's pool does not grow: its
   * spares would live in the host's own memory, where the host's memory watch cannot tell them
   * from a running program's growth.
   */
  poolMemoryMb: Schema.natural().min(0).max(1024 * 1024).default(256),
  /**
   * How a held call pauses a run whose request does not say (`PtcRunRequest.pause`): `live`
   * keeps the program waiting in its environment; `durable` ends it and answers with a signed
   * token that `resume` replays (one-shot runs only: a run with a state owner stays `live`).
   */
  pause: Schema.union(['live', 'durable'] as const).default('live'),
  /**
   * The key durable tokens are signed with (HMAC-SHA256): a string or a Buffer of at least 32
   * bytes, the same in every process that resumes the tokens. Needed for `pause: 'durable'`. A
   * list rotates keys: tokens are signed with its first and verified with any, so a new key goes
   * first and an old one stays after it until its tokens have been resumed or have expired.
   */
  durableKey: Schema.union([Schema.string(), Schema.is(Buffer), Schema.array(Schema.union([Schema.string(), Schema.is(Buffer)]))]),
  /**
   * Where the ids of resumed durable tokens are kept, so each token resumes at most once
   * (`PtcDurableStore`: `claim(tokenId, expiresAt)`). Absent: in this runtime's memory, which
   * holds within this runtime only; give every runtime that resumes the same tokens one shared
   * store. An object is kept as given (its methods keep their `this`).
   */
  durableStore: Schema.is(Object) as unknown as Schema<PtcDurableStore>,
  /**
   * How long a durable token may be resumed after it was sealed, in ms; an older one is refused.
   * Absent: tokens do not expire (a spent one is still refused, by `durableStore`).
   */
  durableTokenLifetimeMs: Schema.natural().min(1).max(Number.MAX_SAFE_INTEGER),
  /**
   * Bytes a durable run's journal may hold: the JSON of every call's argument and reply, which
   * its token carries (besides the program and at most 10 000 recorded clock and random values).
   * A run that pauses durably and goes over it fails at once with an `exception` naming it; a
   * live run keeps no journal. 32 MiB: a token stays a string a database row or a queue message
   * can hold, and sealing it (JSON, deflate) stays short.
   */
  maxJournalBytes: Schema.natural().min(64 * 1024).max(256 * 1024 * 1024).default(32 * 1024 * 1024),
  /**
   * How each helper process is confined. Absent: the default confinement (system and runtime
   * files read-only, the user's home and the host's working directory hidden, a private scratch
   * directory as the cwd, no network). An object widens or narrows that policy; `'none'` runs
   * programs unconfined, with the host user's files and network. When given, its fields are
   * validated (never() admits only absence).
   */
  sandbox: Schema.union([Schema.const('none' as const), Sandbox, Schema.never()]),
})

export type WorkerPtcRuntimeConfig = Schemastery.TypeT<typeof Config>
export type ContainerConfig = Schemastery.TypeT<typeof Container>

/** Every written-out option is one the schema accepts: the compiler fails here otherwise. */
export function asSchemaOptions(options: WorkerPtcRuntimeOptions): Schemastery.TypeS<typeof Config> {
  return options
}

function isolationName(config: WorkerPtcRuntimeConfig): string {
  return typeof config.isolation === 'string' ? `'${config.isolation}'` : 'provider' in config.isolation ? 'a sandbox provider' : 'a stream'
}

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
  const sandbox = config.sandbox === 'none' ? undefined : config.sandbox
  if (sandbox) refuseUnknownKeys(sandbox, Object.keys(Sandbox.dict!), 'sandbox.')
  if (sandbox && config.isolation !== 'process') {
    throw new TypeError(`config.sandbox needs config.isolation 'process': a sandbox confines a helper process under bubblewrap, and ${isolationName(config)} ${config.isolation === 'thread' ? 'runs programs inside this one' : 'is confined by what its environments run in'}`)
  }
  const { isolation } = config
  if (typeof isolation === 'object' && 'provider' in isolation && typeof (isolation.provider as Partial<PtcSandboxProvider> | null)?.acquire !== 'function') {
    throw new TypeError('config.isolation.provider must be a sandbox provider: an object with an acquire({ id, budgets, signal }) method')
  }
  if (config.container) {
    if (config.isolation !== 'container') throw new TypeError(`config.container needs config.isolation 'container', got ${isolationName(config)}`)
    refuseUnknownKeys(config.container, Object.keys(Container.dict!), 'container.')
  }
  const absolute = (field: string, value: string | undefined) => {
    if (value !== undefined && !path.isAbsolute(value)) {
      throw new TypeError(`config.${field} must be an absolute path, got ${JSON.stringify(value)}`)
    }
  }
  absolute('cwd', config.cwd)
  if (config.durableStore !== undefined && typeof (config.durableStore as { claim?: unknown }).claim !== 'function') {
    throw new TypeError('config.durableStore must have a claim(tokenId, expiresAt) method resolving whether the token was unspent (PtcDurableStore)')
  }
  if (config.durableKey !== undefined) durableKeys(config.durableKey)
  else if (config.pause === 'durable') throw new TypeError("config.pause 'durable' needs config.durableKey (a string or Buffer of at least 32 bytes) to sign its tokens")
  if (sandbox) {
    absolute('sandbox.workspaceRoot', sandbox.workspaceRoot)
    sandbox.writableRoots?.forEach((root, index) => absolute(`sandbox.writableRoots[${index}]`, root))
    sandbox.readableRoots?.forEach((root, index) => absolute(`sandbox.readableRoots[${index}]`, root))
    const { bwrapPath } = sandbox
    if (bwrapPath === '' || (bwrapPath.includes('/') && !path.isAbsolute(bwrapPath))) {
      throw new TypeError(`config.sandbox.bwrapPath must be an absolute path or a command name, got ${JSON.stringify(bwrapPath)}`)
    }
  }
}
