/**
 * The vocabulary of the seam: what a consumer passes to `resolve` and `run`, what a result holds,
 * and the closed lists (program formats, sandbox modes) each listed once, here, as a constant
 * that its type and every validator derive from. Nothing here knows about workers.
 */
import type { PtcImage } from './image.js'

/** A value that survives a JSON round trip unchanged. */
export type PtcJsonValue = null | boolean | number | string | PtcJsonValue[] | { [key: string]: PtcJsonValue }

/** Every program format, the one list the type, the config schema and the transformer derive from. */
export const PROGRAM_FORMATS = ['function-body', 'script', 'repl', 'scoped-repl'] as const

/** Which evaluation form `program` follows. */
export type PtcProgramFormat = (typeof PROGRAM_FORMATS)[number]

/** Every program language, the one list the type, the config schema and `resolve` derive from. */
export const PROGRAM_LANGUAGES = ['javascript', 'typescript', 'python'] as const

/**
 * The language `program` is written in. `typescript` programs may carry type annotations,
 * interfaces, `as`, generics and `satisfies`; their types are erased (not checked) before the
 * program runs, keeping every position. `python` programs run in Pyodide (CPython in WebAssembly,
 * the optional peer dependency `pyodide`) inside the same environment and confinement.
 */
export type PtcProgramLanguage = (typeof PROGRAM_LANGUAGES)[number]

/** What a binding may resolve: lossless JSON, in which host-issued images may appear anywhere. */
export type PtcBindingValue =
  | PtcJsonValue
  | PtcImage
  | PtcBindingValue[]
  | { [key: string]: PtcBindingValue }

/** What a host function gets besides the program's argument. */
export interface PtcBindingCall {
  /**
   * Aborts when the run settles (any outcome) or the call runs past its `timeoutMs`, so the host
   * can stop in-flight work.
   */
  signal: AbortSignal
  /**
   * Holds this call for a decision taken outside the run, by a person or another system: the
   * run answers its caller at once with `result.paused` (the call, its arguments and `payload`,
   * which must be lossless JSON), while the program waits inside its environment with the call
   * pending and its deadline stopped. `runtime.resume(paused.id, decision)` answers the hold:
   * approved, the promise resolves with `decision.value` (`undefined` when none) and the host
   * function goes on; refused, it rejects with an `Error` whose message is the reason, which the
   * program's call rejects with unless the host function catches it. It also rejects when the
   * run ends first (the hold expired, `release`, disposal, the program's own failure), and when
   * called after this host function settled.
   */
  hold(payload: PtcJsonValue): Promise<PtcJsonValue | undefined>
  /**
   * The JSON bytes of the call's argument, as the host read it (what `maxPendingCallBytes`
   * charges). Always set in a run; absent when a host calls the function itself.
   */
  argumentBytes?: number
  /**
   * What the run's calls have cost the host's thread so far, one object shared by all of them:
   * a tool group adds the time its schema checks took, and refuses a call once the run is past
   * its budget. Always set in a run; absent when a host calls the function itself.
   */
  ledger?: PtcRunLedger
  /**
   * The JSON bytes this call may resolve: the smaller of its member's `maxResultBytes` and the
   * run's `maxCallResultBytes`, so a function that writes what it resolves (an image file) can
   * refuse before it writes. Always set in a run; absent when a host calls the function itself.
   */
  maxResultBytes?: number
}

/** What one run's binding calls have cost the host's thread so far (`PtcBindingCall.ledger`). */
export interface PtcRunLedger {
  /** Ms the host spent checking this run's arguments against tool groups' schemas (every check, watched or not). */
  schemaCheckMs: number
}

/**
 * A host function exposed to programs as `<global>.<member>(args)`: see `PtcBindingCall` for
 * its second argument. Throwing a `PtcCallRefusal` refuses the call (the trace says `refused`).
 *
 * `args` is whatever lossless JSON the program passed (checked against a schema only by tool
 * groups). It is typed `any` by default so a strict TypeScript user can annotate the shape they
 * expect (`async ({ city }: { city: string }) => …`) without a cast; name it
 * (`PtcBindingFunction<{ city: string }>`) to type a function on its own.
 *
 * What it resolves must be lossless JSON or a `PtcImage` (anything else fails the program's
 * call), unless its namespace sets `convertResults`, which converts it as `JSON.stringify` would.
 */
export type PtcBindingFunction<Args = any> = (args: Args, call: PtcBindingCall) => Promise<PtcBindingValue>

/**
 * A binding call that failed because of the host side, reported to the developer through
 * `PtcRunRequest.onBindingError`; the program's call rejected with `message` either way.
 */
export interface PtcBindingErrorReport {
  /** The binding called, `global.member`. */
  binding: string
  /**
   * `threw`: the host function threw or rejected. `invalid-value`: it resolved something the
   * program cannot receive (not lossless JSON, `undefined`, a malformed `PtcImage`), a bug on
   * the host side the model cannot fix.
   */
  kind: 'threw' | 'invalid-value'
  /** The message the program's call rejected with. */
  message: string
  /** What the host function threw (`threw`) or resolved (`invalid-value`). */
  cause: unknown
}

/** The class a rejected binding call is turned into inside the program. */
export interface PtcBindingErrorClass {
  /** Program-visible global name of the class. */
  name: string
  /** Own property of each instance that holds the member name that failed. */
  memberNameProperty: string
}

/** Budgets of one call to one member, enforced by the host. */
export interface PtcCallLimits {
  /**
   * Time budget of one call, in ms: past it the call rejects in the program with a message
   * naming the member, and the function's `call.signal` aborts.
   */
  timeoutMs?: number
  /**
   * Bytes of the JSON the call may resolve; over it the call rejects in the program. The run's
   * `maxCallResultBytes` applies as well: the smaller budget wins.
   */
  maxResultBytes?: number
  /**
   * Bytes of the JSON the call's argument may hold; over it the call is refused in the program
   * before the function runs, so the host neither checks nor keeps a larger one.
   */
  maxArgumentBytes?: number
}

/** One program-visible global object of async host functions. */
export interface PtcBindingNamespace {
  /** Program-visible global name; must be a portable identifier (see `validateBindings`). */
  global: string
  /**
   * Member name → host function. Any string is a member name, `__proto__` included. Values may
   * be typed `undefined` so an array literal of namespaces with different members type-checks
   * (TypeScript widens each to `{ a: F; b?: undefined }`); a member that is not a function is
   * refused by `validateBindings`.
   */
  functions: Record<string, PtcBindingFunction | undefined>
  /** When given, rejected calls become instances of this class inside the program. */
  errorClass?: PtcBindingErrorClass
  /**
   * Members receive the program's first two arguments as an array (`f(a, b)` → `[a, b]`,
   * `f(a)` → `[a]`) instead of the first alone, for functions with options after their
   * subject (`catalog.search(query, { limit })`).
   */
  positional?: boolean
  /** Member name → its call budgets; members without an entry have only the run's. */
  limits?: Record<string, PtcCallLimits>
  /**
   * Converts what the functions resolve as `JSON.stringify` would, instead of requiring lossless
   * JSON: `undefined` reaches the program as `undefined`, a `Date` (any `toJSON`) as what its
   * `toJSON` returns, object fields that are `undefined` are dropped, array elements that are
   * `undefined` become `null`, boxed primitives are unwrapped and `-0` becomes `0`. A function,
   * a symbol, a BigInt without `toJSON`, `NaN`, `±Infinity`, a cycle or a proxy anywhere in the
   * value still fails the call. The conversion stops as soon as the value is surely over the
   * call's `maxResultBytes`. Tool groups (`defineToolGroup`, `mcpToolGroup`, `fromAiSdkTools`)
   * set it; without it (the default) a function must resolve lossless JSON or a `PtcImage`, and
   * anything else fails the call. With it, a function may resolve any such value: type it
   * `as never`, or define the tools as a tool group.
   */
  convertResults?: boolean
}

/** Every sandbox mode, the one list the type, the config schema and policy checks derive from. */
export const SANDBOX_MODES = ['read-only', 'workspace-write', 'danger-full-access'] as const

/** A deployment's file policy: read everything and write nothing, write inside the workspace, or no confinement. */
export type SandboxMode = (typeof SANDBOX_MODES)[number]
/**
 * What network a sandboxed program reaches: none at all (a private network namespace), the
 * host's, or only the hosts an egress policy names, through the host's broker.
 */
export type SandboxNetwork = 'none' | 'host' | SandboxEgress

/**
 * Brokered egress: the program keeps no network of its own, and its `fetch` goes through the
 * host, which reaches only the hosts `allow` names and adds `headers` the program never sees.
 */
export interface SandboxEgress {
  /**
   * Hosts the program's `fetch` may reach, over http or https: `api.github.com`, `*.example.com`
   * (every subdomain, not the domain itself), an IP literal (`127.0.0.1`, `[::1]`), each with an
   * optional `:port` (without one, only the scheme's default port). A name that resolves to a
   * private, loopback or link-local address is refused; an IP literal entry is the deployer's
   * choice and allowed whatever it is.
   */
  allow: string[]
  /** Host (as in `allow`, without a wildcard) → headers added to every request to it, replacing the program's. */
  headers?: Record<string, Record<string, string>>
}
/** How completely a result's sandbox policy was enforced; reported in `PtcRunSandbox.enforcement`. */
export type SandboxEnforcement = 'full' | 'partial'

/** The file policy one run executes under. */
export interface SandboxExecutionPolicy {
  /** What the program may write. */
  mode: SandboxMode
  /**
   * Absolute path of the workspace; writable in `workspace-write` mode. A writable root in a
   * request's policy must be a real path: one that passes through a symlink fails the run with
   * `sandbox-unavailable` (the deployment's own roots are resolved once, when the plugin loads).
   */
  workspaceRoot: string
  /** Further absolute paths writable in `workspace-write` mode; real paths, as `workspaceRoot`. */
  writableRoots?: string[]
  /**
   * Absolute paths shown read-only although they lie in a place a confined program does not see
   * (the host user's home, the host's working directory, `/tmp`, `/run`).
   */
  readableRoots?: string[]
  /**
   * The network the program reaches. Defaults to `'none'` in the confined modes (no network
   * and no abstract unix sockets shared with the host); `danger-full-access` is always `'host'`.
   * A `SandboxEgress` object keeps the confined helper without network and brokers the
   * program's `fetch` through the host to the hosts it allows.
   */
  network?: SandboxNetwork
}

/** Sandbox facts reported with a result. */
export interface PtcRunSandbox {
  /** The mode the run executed under. */
  mode: SandboxMode
  /** The network the run could reach; `'brokered'`: only the allowed hosts, through the host's `fetch`. */
  network: 'none' | 'host' | 'brokered'
  /** The program's failure text carried the backend's denial signature. A diagnostic, not proof. */
  denied: boolean
  /** How completely the policy was enforced; absent when nothing was confined. */
  enforcement?: SandboxEnforcement
}

/** What a caller asks for. */
export interface PtcRunRequest {
  /** Source text in the provider's `programFormat`. */
  program: string
  /** The program's language; omitted: the provider's `language`. */
  language?: PtcProgramLanguage
  /** Namespaces installed as globals for this run. */
  bindings: PtcBindingNamespace[]
  /** Drop the completion without validating it. */
  discardCompletion?: boolean
  /** Identity key of a retained environment. */
  stateOwner?: object
  /** Working directory of the program's fs and subprocess world. */
  cwd?: string
  /** Omitted: provider default; number: capped budget; `null`: no deadline. */
  timeoutMs?: number | null
  /** File policy for this run; only providers with a configured sandbox accept one. */
  sandboxPolicy?: SandboxExecutionPolicy
  /** Hard stop, even inside a synchronous loop. */
  signal?: AbortSignal
  /**
   * Called in the host, once per binding call that failed on the host side, while the run is
   * live. Without it, an `invalid-value` (a host bug the model cannot fix) is emitted as a
   * process warning with code `PTC_INVALID_TOOL_VALUE`, and `threw` goes to the program only.
   * What the hook throws is ignored.
   */
  onBindingError?: (report: PtcBindingErrorReport) => void
  /**
   * Binding calls this run may start; later calls are refused in the program. Omitted: the
   * provider's `maxCalls` (1 000 by default).
   */
  maxCalls?: number
  /**
   * How a held call pauses the run. `live` (the default unless the runtime's `pause` says
   * otherwise): the program waits in its environment, and `resume(id, decision)` continues it.
   * `durable`: the environment ends, and `result.paused.token` is a signed string that
   * `resume(token, decision, { bindings })` replays in a fresh environment, even in another
   * process (see the README's "Durable resume"). Not with a `stateOwner` of a retaining runtime.
   */
  pause?: PtcPauseMode
}

/** What every durable token (`PtcPause.token`) starts with; a live hold id never does. */
export const DURABLE_TOKEN_PREFIX = 'ptc-durable.'

/** How a held call pauses its run: see `PtcRunRequest.pause`. */
export type PtcPauseMode = 'live' | 'durable'

/** What `resume` takes besides the id and the decision. */
export interface PtcResumeOptions {
  /** Stops the run from here on, as a run's signal does until its first answer. */
  signal?: AbortSignal
  /**
   * A durable token only (required there): the run's bindings, given again, since a token does
   * not carry functions. The replay's calls must match the recorded ones, so pass what the run had.
   */
  bindings?: PtcBindingNamespace[]
  /** A durable token only: the run's sandbox policy, given again (a token does not carry it). */
  sandboxPolicy?: SandboxExecutionPolicy
  /** A durable token only: `PtcRunRequest.onBindingError` for the resumed run. */
  onBindingError?: (report: PtcBindingErrorReport) => void
}

/** A request after `resolve`: every choice made explicit. */
export interface PtcRunSpec extends PtcRunRequest {
  cwd: string
  timeoutMs: number | null
}

/** Describes an image the host holds, as it appears in a result's output. */
export interface ImageAttachmentRef {
  /** Host-chosen identifier the consumer resolves to the image itself. */
  attachmentId: string
  /** Encoding of the image. */
  mediaType: 'image/png' | 'image/jpeg' | 'image/webp' | 'image/gif'
  /** Size of the encoded image in bytes. */
  bytes: number
  /** Width in pixels. */
  width: number
  /** Height in pixels. */
  height: number
  /** Optional human-readable label. */
  name?: string
}

/** One output entry, in emission order. Adjacent text entries concatenate without separators. */
export type PtcOutput = { type: 'text'; text: string } | { type: 'image'; attachment: ImageAttachmentRef }

/** Why a run failed; the kinds are orthogonal (a timeout is never an exception). */
export type PtcFailureKind =
  | 'exception'
  | 'timeout'
  | 'abort'
  | 'worker-exit'
  | 'invalid-output'
  | 'output-limit'
  | 'protocol'
  | 'sandbox-unavailable'

/** Why a run failed, written for a model to read and correct its program. */
export interface PtcRunFailure {
  /** Which of the failure kinds happened. */
  kind: PtcFailureKind
  /** Short text for the model, pointing at the program's own line and column where it can. */
  message: string
}

/** How one binding call ended; see `PtcCallRecord.outcome`. */
export type PtcCallOutcome = 'ok' | 'error' | 'aborted' | 'timeout' | 'refused'

/** One binding call of a run, as the host saw it. */
export interface PtcCallRecord {
  /** `global.member`, e.g. `github.search_issues`. */
  tool: string
  /** When the call reached the host, in ms since the program was sent. */
  startMs: number
  /** From `startMs` to the call's settlement (or to the run's end, for `aborted`), in ms. */
  durationMs: number
  /**
   * `ok`: the tool resolved and the program received the value. `error`: the tool threw, or
   * what it resolved was refused (not lossless JSON, over `maxResultBytes`). `timeout`: it ran
   * past its `timeoutMs`. `refused`: the host refused it before the tool ran (invalid arguments,
   * `maxCalls`, the argument budget, an undeclared member). `aborted`: the run ended first;
   * when the program completed, that call was never awaited.
   */
  outcome: PtcCallOutcome
  /** The message the program received (or, for `aborted`, why the call has no answer). */
  error?: string
  /** JSON bytes of the argument (0 when the program passed none). */
  argumentBytes: number
  /**
   * JSON bytes of what the tool resolved; present when it resolved, except for a result its
   * namespace converts (`convertResults`) that was refused as over its budget: the conversion
   * stops reading it there, so its size is known only to be larger.
   */
  resultBytes?: number
}

/** A binding call held for a decision (see `PtcBindingCall.hold`); the program waits for it. */
export interface PtcPause {
  /**
   * Answer it with `runtime.resume(id, decision)`; each live id is answered once. For a durable
   * pause it is the token itself.
   */
  id: string
  /**
   * Present exactly when the run paused durably (`pause: 'durable'`): a signed string that
   * `runtime.resume(token, decision, { bindings })` replays, here or in another process with
   * the same `durableKey`, at most once (a second resume is refused: `durableStore`), and
   * within `durableTokenLifetimeMs` when one is set. The run's environment has ended.
   */
  token?: string
  /** The call as the program made it: `<global>.<member>`. */
  tool: string
  /** The call's argument; absent when the program passed none. */
  args?: PtcJsonValue
  /** What the host function gave `hold` (`null` for a tool's `needsApproval`). */
  payload: PtcJsonValue
}

/**
 * The answer to a held call. Approved, the held host function goes on (`value` is what its
 * `hold` resolves with); refused, the program's call rejects with `reason`.
 */
export type PtcHoldDecision = { approve: true; value?: PtcJsonValue } | { approve: false; reason?: string }

/**
 * Everything a run produced. `error` is present exactly when the run failed; `paused` exactly
 * when it is held, its program waiting, and then neither `value` nor `error` is.
 */
export interface PtcRunResult {
  /**
   * Every binding call the program started, in start order, whatever the outcome of the run.
   * Empty when it made none.
   */
  calls: PtcCallRecord[]
  /**
   * Printed text and inspected images, in emission order; after a pause, what was printed since
   * the previous answer of the same run.
   */
  output: PtcOutput[]
  /** The completion value; absent when the program completed with `undefined` or failed. */
  value?: PtcJsonValue
  /** Present exactly when the run failed. */
  error?: PtcRunFailure
  /** Present when the run executed under a sandbox policy. */
  sandbox?: PtcRunSandbox
  /** Present when a binding call is held for a decision: continue with `runtime.resume`. */
  paused?: PtcPause
}
