/**
 * The configuration a caller passes, written out as a type of its own. The schema in
 * `config.ts` validates it; this type is what consumers' compilers read, so that the package's
 * declarations do not reach schemastery's (whose own imports Node16 resolution refuses).
 * `config.ts` checks at compile time that the two agree.
 */
import type { PtcProgramFormat, PtcProgramLanguage, SandboxMode, SandboxNetwork } from '../seam/types.js'
import type { PtcDurableStore } from './durable/store.js'
import type { PtcSandboxProvider, PtcStreamFactory } from './environments/stream/provider.js'
import type { TierName } from './environments/tiers.js'

/** The configuration `createPtcRuntime(options)` and `ctx.plugin(WorkerPtcRuntime, options)` accept; every field is optional. */
export interface WorkerPtcRuntimeOptions {
  /**
   * Where each environment's worker lives: a tier's name (`TIERS`: `'process'`, the default;
   * `'thread'`; `'container'`; `'plain'`, a helper process with no confinement, trusted programs
   * only), `{ provider }` or `{ stream }`.
   */
  isolation?: TierName | { provider: PtcSandboxProvider } | { stream: PtcStreamFactory }
  /** The container tier's engine, image, OCI runtime and extra `run` arguments (`isolation: 'container'` only). */
  container?: { engine?: string; image?: string; runtime?: string; args?: string[] }
  /** Time budget of a run that does not set its own, in ms; default 120 000. */
  timeoutMs?: number
  /** Cap on a request's numeric `timeoutMs`; default 600 000. */
  maxTimeoutMs?: number
  /** One cap on output, image descriptors and the value together, in UTF-8 bytes of their JSON; default 64 MiB. */
  maxOutputBytes?: number
  /** UTF-8 bytes of one program; a longer one fails its run before the host parses it. Default 64 KiB. */
  maxProgramBytes?: number
  /** V8 old-generation heap cap of each worker, in MB; default 512. */
  maxOldGenerationSizeMb?: number
  /** Everything one environment may hold beyond a fresh one, in MB; default 1 024. */
  maxMemoryMb?: number
  /** Processes and threads one environment may have at once; default 512. */
  maxProcesses?: number
  /** Binding calls one run may have in flight at once; default 128. */
  maxPendingCalls?: number
  /** JSON bytes of the arguments of binding calls in flight at once; default 16 MiB. */
  maxPendingCallBytes?: number
  /** Binding calls one run may start; default 1 000. */
  maxCalls?: number
  /** JSON bytes one binding call may resolve; default 16 MiB. */
  maxCallResultBytes?: number
  /** Response bytes one environment's brokered fetches may hold at once; default 16 MiB. */
  maxFetchBytesInFlight?: number
  /** Response bytes all environments' brokered fetches may hold at once; default 128 MiB. */
  maxHostFetchBytesInFlight?: number
  /** Default working directory of runs, absolute; under the default confinement shown read-only. */
  cwd?: string
  /** The program format; default `'function-body'`. */
  programFormat?: PtcProgramFormat
  /** Programs' language by default; `'typescript'` erases types before a run, `'python'` needs the optional `pyodide`. Default `'javascript'`. */
  language?: PtcProgramLanguage
  /** Keep one environment per `stateOwner`; default `false`. */
  retainState?: boolean
  /** A retained environment unused this long is released, in ms; default 15 minutes. */
  idleMs?: number
  /** A held call not answered this long fails its run with a `timeout`, in ms; default 15 minutes. */
  holdTimeoutMs?: number
  /** Environments kept started ahead of runs under the default policy, at most 64; default 1. */
  poolSize?: number
  /** Memory the pool's spares may hold when demand grows it beyond `poolSize`, in MB (a helper counts 16; the thread tier's pool does not grow); default 256, 0 keeps it at `poolSize`. */
  poolMemoryMb?: number
  /** How a held call pauses a run whose request does not say; default `'live'`. */
  pause?: 'live' | 'durable'
  /** The key durable tokens are signed with: a string or Buffer of at least 32 bytes, or a list of them (the first signs, any verifies: rotation). */
  durableKey?: string | Buffer | Array<string | Buffer>
  /** Where resumed tokens' ids are kept, so each token resumes at most once; default in memory. */
  durableStore?: PtcDurableStore
  /** A durable token older than this is refused by `resume`, in ms; default none (no expiry). */
  durableTokenLifetimeMs?: number
  /** Bytes of call arguments, replies and decisions a durable run's journal may hold; default 32 MiB. */
  maxJournalBytes?: number
  /** How helpers are confined: absent, the default confinement; a policy; or `'none'` (unconfined). */
  sandbox?:
    | 'none'
    | {
        mode?: SandboxMode
        workspaceRoot?: string
        writableRoots?: string[]
        readableRoots?: string[]
        network?: SandboxNetwork
        bwrapPath?: string
      }
}
