/**
 * The wire protocol between the host and a worker, imported by both sides. Everything a
 * worker sends is untrusted: the host rebuilds each message through `parseWorkerMessage`
 * (host/messages.ts) before acting on it.
 *
 * Channel: a private MessagePort handed to the worker at spawn (`workerData.port`). The
 * worker's `parentPort` is never used by us, so any traffic on it is forged.
 */
import type { MessagePort } from 'node:worker_threads'
import type { SerializedPositions } from '../transform/index.js'
import type { WireTokens } from '../json/index.js'
import type { PtcJsonValue } from '../seam/types.js'

/** What the worker needs to know about one binding namespace: names, never functions. */
export interface NamespaceShape {
  global: string
  members: string[]
  errorClass?: { name: string; memberNameProperty: string }
  /** Members send their first two arguments as an array (see `PtcBindingNamespace.positional`). */
  positional?: true
  /**
   * The host's egress broker (`src/host/egress/broker.ts`): the worker installs the program's `fetch`
   * over its one member, `send`, instead of a namespace global.
   */
  egress?: true
}

/** Bytes of a request body the program's brokered `fetch` may send (both sides refuse more). */
export const PTC_FETCH_MAX_REQUEST_BODY_BYTES = 1024 * 1024

/**
 * The request line and headers of a brokered `fetch`: headers it may send, bytes of their names
 * and values together, and characters of its URL (both sides refuse more, the host before it
 * walks them). Well past what servers take (Node's own HTTP server takes 16 KiB of request line
 * and headers together); what they bound is the host's work on one request.
 */
export const PTC_FETCH_MAX_REQUEST_HEADERS = 256
export const PTC_FETCH_MAX_REQUEST_HEADER_BYTES = 64 * 1024
export const PTC_FETCH_MAX_URL_LENGTH = 64 * 1024

/** The refusal of request headers past either cap, in the same words on both sides. */
export function fetchHeadersRefusal(): string {
  return 'fetch: the request may have at most ' + PTC_FETCH_MAX_REQUEST_HEADERS + ' headers, of at most ' + PTC_FETCH_MAX_REQUEST_HEADER_BYTES + ' bytes of names and values together'
}

/** The refusal of a URL past its cap, in the same words on both sides. */
export function fetchUrlRefusal(length: number): string {
  return 'fetch: the URL has ' + length + ' characters, over the cap of ' + PTC_FETCH_MAX_URL_LENGTH
}

/**
 * The methods the program's brokered `fetch` may use, written as they go on the wire. The
 * worker's `fetch` refuses any other before it sends, and the broker refuses any other it is
 * sent (a program can post the broker's call itself). Fetch's forbidden methods are not here:
 * a TRACE answer echoes the request, and with it the headers the broker injects.
 */
export const PTC_FETCH_METHODS: readonly string[] = Object.freeze(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'])

// Built while the module loads, before any program runs: the checks below call no method a
// program could replace.
const FETCH_METHODS: Record<string, true> = Object.create(null)
for (const method of PTC_FETCH_METHODS) FETCH_METHODS[method] = true
const FETCH_METHODS_LISTED = PTC_FETCH_METHODS.join(', ')

/** Whether `method` is one of `PTC_FETCH_METHODS`, exactly as written there. */
export function isFetchMethod(method: string): boolean {
  return FETCH_METHODS[method] === true
}

/** The refusal of a method outside `PTC_FETCH_METHODS`, in the same words on both sides. */
export function fetchMethodRefusal(method: string): string {
  return 'fetch: method "' + method + '" is not allowed; the methods are ' + FETCH_METHODS_LISTED
}

/** What the host's egress broker answers for one fetch: the response, its body base64. */
export interface PtcFetchAnswer {
  status: number
  statusText: string
  headers: [string, string][]
  body: string
  url: string
  redirected: boolean
}

/** A lowered program as it crosses to the worker. */
export interface ProgramCode {
  code: string
  positions: SerializedPositions
  /** Present for a Python program: `code` is its source, run by the worker's interpreter (src/worker/python.ts). */
  python?: PythonProgram
}

/** How the worker runs a Python program: its format, and the Pyodide the host resolved. */
export interface PythonProgram {
  format: 'function-body' | 'script' | 'repl' | 'scoped-repl'
  /** Pyodide's package directory (real path), readable inside every tier's confinement. */
  directory: string
  /** The version the host read there; the worker checks the interpreter it loads against it. */
  version: string
}

/**
 * The Pyodide memory snapshot an environment is handed as it starts, to restore instead of
 * booting (src/python/snapshot.ts): an unnamed read-only file, read through `/proc/self/fd` at
 * `descriptor`, with its size and SHA-256 (checked before restoring) and Pyodide's version.
 */
export interface PythonSnapshot {
  descriptor: number
  /**
   * The descriptor is the environment's own (a helper's PYTHON_SNAPSHOT_FD): read and closed as
   * the first run arrives (or the rehearsal loads the interpreter), before any of its code, so
   * none holds it. A worker thread of the host's reads the host's own descriptor, never closed.
   */
  own: boolean
  bytes: number
  sha256: string
  version: string
}

/**
 * The environment variable every subprocess a program starts carries (with a value unique to its
 * environment), inherited by its descendants: it finds processes that left both the process tree
 * and the process group (`setsid`, a double fork) when the run settles.
 */
export const SUBPROCESS_MARKER_VARIABLE = 'PTC_ENVIRONMENT'

/** The binding namespace of the rehearsal program (src/worker/rehearsal.ts); it exists only while it runs. */
export const REHEARSAL_GLOBAL = 'rehearsal'

/** The rehearsal, lowered by the host in the `script` format (which completes with its last expression). */
export const REHEARSAL_SOURCE = `const echoed = await ${REHEARSAL_GLOBAL}.echo({ list: [1, 'two', null, true, { nested: 2.5 }] })
const both = await Promise.all([${REHEARSAL_GLOBAL}.echo('a'), ${REHEARSAL_GLOBAL}.echo('b')])
console.log('rehearsal', echoed, both)
;({ echoed, both })
`

/**
 * How the worker of a helper process talks to the host directly (src/worker/channel.ts and
 * inbox.ts): it writes frames to descriptor `fd`, holding `lock` (shared with the helper's main
 * thread) for each, and reads host frames from descriptor `inbox`.
 */
export interface HelperChannel {
  fd: number
  lock: Int32Array
  inbox: number
}

/**
 * What a worker is started with (`workerData`, src/helper/helper-worker.ts `startWorker`). The
 * worker takes out the port, channel and rehearsal before any program runs.
 */
export interface WorkerData {
  /** The private port to the host (or to the helper's main thread). */
  port?: MessagePort
  /** In a helper process: the worker writes its run messages to the host itself. */
  channel?: HelperChannel
  rehearsal?: ProgramCode
  /**
   * Whether the worker shares the host's process (the thread host): the worker then closes what
   * reaches into the host (src/worker/shared-process-guard.ts) and refuses nested workers. False in a
   * helper process, which the host kills from outside.
   */
  sharesHostProcess: boolean
  /** The marker every subprocess inherits (SUBPROCESS_MARKER_VARIABLE). */
  subprocessMarker: string
  /** Python's snapshot, when the host had built it as the worker started. */
  pythonSnapshot?: PythonSnapshot
}

// host -> worker ---------------------------------------------------------------------------

export interface RunMessage {
  type: 'run'
  run: number
  program: ProgramCode
  /** Present when the environment is new and an initializer is registered. */
  initializer?: ProgramCode
  namespaces: NamespaceShape[]
  cwd: string
  /** Output budget the worker enforces locally so floods stop early; the host re-checks. */
  maxOutputBytes: number
  /**
   * Budget of the arguments of calls in flight (maxPendingCallBytes). The worker refuses a call
   * over it before copying its arguments out, so a heavy call never crosses a channel; the host
   * re-checks.
   */
  maxPendingCallBytes: number
  discardCompletion: boolean
  /**
   * No run follows in this environment. Right after its terminal message the worker ends its
   * thread, so nothing the program left behind (timers, pending promises, exit handlers) runs
   * once the host has the result, and the host need not wait for the exit to return it.
   */
  oneShot: boolean
  /**
   * Present when the run may pause durably (`pause: 'durable'`): the worker records what the
   * program's clocks and randomness answer (`src/worker/draws.ts`), first answering with these
   * values, recorded by the run it replays, in order.
   */
  durable?: DrawValues
}

/**
 * What a durable run's clocks and randomness answered, one list per source, in order: `Date.now`
 * and `new Date()` (`clock`, milliseconds), `Math.random` (`random`), `crypto.getRandomValues`
 * (`bytes`, each call's bytes as lowercase hex).
 */
export interface DrawValues {
  clock: number[]
  random: number[]
  bytes: string[]
}

/** Values a durable run may record (the three lists together); past it, the run cannot pause durably. */
export const MAX_DRAWS = 10_000
/** Bytes of `crypto.getRandomValues` a durable run may record (all calls together). */
export const MAX_DRAW_BYTES = 65_536

/**
 * The most keys the host reads in one object of program data (a call's arguments, a completion),
 * and in all of a message's program data together. Bytes alone do not bound keys: V8 builds an
 * object of millions of distinct keys in time that grows faster than its keys, in steps that
 * hold the host's event loop (1.5 million keys, which 16 MiB of arguments hold, took 1.9 s of
 * the host's CPU and stalled it 277 ms), and interns every distinct key. Genuine data of 100 000
 * keys in one object fits with room to spare. The worker refuses a value past either bound, so
 * the program reads why; the host refuses a message past them, whoever wrote it.
 */
export const MAX_OBJECT_KEYS = 262_144
export const MAX_MESSAGE_KEYS = 1_048_576
/**
 * The most values the host reads in all of a message's program data: lists, objects, strings,
 * numbers, booleans and nulls, each one (keys are counted apart, above). Bytes alone do not bound
 * them: a value costs the host tens of bytes however short its JSON (a list or an object 40-60,
 * a string of two characters about 40 with its place in a list), so 63 MiB of `"ab",` in a
 * completion were 13 million strings, 614 MB of the host's heap, and ten such runs at once took
 * it to 96 % of its heap limit. The host holds a message's program data at this bound in at
 * most about 250 MB of its heap (measured, Node 20: a 64 MiB completion of a million long keys
 * each holding `{}` and a million `{}` more, 246 MB; two million `{}`, 141 MB; two million
 * `"ab"`, 74 MB); a legitimate call of 1.3 million empty objects fits.
 */
export const MAX_MESSAGE_VALUES = 2_097_152

/** The options of `snapshotJson` that refuse, in the worker, what the host would not read. */
export const KEY_BOUNDS = { maxKeys: { perObject: MAX_OBJECT_KEYS, total: MAX_MESSAGE_KEYS, values: MAX_MESSAGE_VALUES } } as const

/** The rule a value with too many keys or values breaks, as the program and the model read it. */
export const KEY_BOUNDS_RULE = `the host reads at most ${MAX_OBJECT_KEYS} keys in one object, and ${MAX_MESSAGE_KEYS} keys and ${MAX_MESSAGE_VALUES} values (lists, objects, strings, numbers, booleans and nulls) in a completion or a call's arguments`

/** Why a call over the budget of arguments in flight was refused, in the worker or the host. */
export function overBudgetCallMessage(label: string, bytes: number, maxPendingCallBytes: number): string {
  return `${label} was not called: its arguments (${bytes} bytes) would bring the arguments of calls in flight over ${maxPendingCallBytes} bytes (maxPendingCallBytes)`
}

/**
 * The answer to one call. `value` is the resolution's wire tokens; an empty list stands for
 * `undefined`, which the host sends only for a namespace that converts results
 * (`convertResults`): every JSON value takes at least one token, so the two never meet.
 */
export type ReplyMessage =
  | { type: 'reply'; run: number; id: number; ok: true; value: WireTokens }
  | { type: 'reply'; run: number; id: number; ok: false; message: string }

/** Replies that became ready in the same tick, in one message (several concurrent calls). */
export interface RepliesMessage {
  type: 'replies'
  run: number
  replies: ReplyMessage[]
}

/**
 * Nothing to do: the host writes it once to a fresh helper's inbox when the helper reports ready.
 * A process's first read of a descriptor runs Node's stream-read path for the first time, which
 * costs 0.4 ms more than later reads (measured); this read takes that cost while the helper is a
 * spare, so the first run's frame is not the first read. The worker drops it.
 */
export interface WarmMessage {
  type: 'warm'
}

export type HostMessage = RunMessage | ReplyMessage | RepliesMessage | WarmMessage

// worker -> host ---------------------------------------------------------------------------

/**
 * The worker's first message, sent once when every module is loaded (the host may terminate it
 * from then on without leaking the handles of a load in progress). It carries no run number: a
 * `ready` that arrives while a run is listening is forged.
 */
export interface ReadyMessage {
  type: 'ready'
}

/**
 * The run's program is about to start: sent before the initializer or the program is evaluated,
 * so a worker (or its helper) that ends without having sent it never ran any of the run's code,
 * and the host may run the program elsewhere.
 */
export interface StartedMessage {
  type: 'started'
  run: number
}

/** A text entry is its string; an image entry names an attachment the host issued. */
export type OutputItem = string | { attachmentId: string }

export interface OutputMessage {
  type: 'output'
  run: number
  items: OutputItem[]
}

export interface CallMessage {
  type: 'call'
  run: number
  id: number
  global: string
  name: string
  /**
   * Absent when the program called the member without arguments. A `snapshotJson` copy: the
   * message crosses as JSON text (src/protocol/frames.ts `messageFrame`, src/worker/outbox.ts), which
   * the host reads with bounds as it arrives (src/host/connection/json-lines.ts), so a call costs the
   * channel its arguments' JSON bytes, the count `maxPendingCallBytes` budgets.
   */
  args?: PtcJsonValue
}

/** Calls the program made in the same tick, in one message (`Promise.all` over tools). */
export interface CallsMessage {
  type: 'calls'
  run: number
  calls: CallMessage[]
}

/** The program completed; `value` is absent when the completion was `undefined` or discarded. */
export interface DoneMessage {
  type: 'done'
  run: number
  /** A `snapshotJson` copy, crossing as JSON text like a call's arguments. */
  value?: PtcJsonValue
}

export type WorkerFailureKind = 'exception' | 'invalid-output' | 'output-limit'

export interface FailedMessage {
  type: 'failed'
  run: number
  kind: WorkerFailureKind
  message: string
  /** The environment initializer failed: the environment must be discarded. */
  initializer?: true
  /** The environment cannot serve runs any more (its global object refuses new bindings). */
  unusable?: true
}

/** The program started a subprocess (as a new process group) the host must kill at settlement. */
export interface SpawnedMessage {
  type: 'spawned'
  run: number
  pid: number
}

/**
 * Values a durable run's clocks and randomness answered since the previous report, sent before
 * the run's next binding calls. `overflow`: the program drew more than `MAX_DRAWS` values or
 * `MAX_DRAW_BYTES` bytes, and later ones went unrecorded.
 */
export interface DrawsMessage extends DrawValues {
  type: 'draws'
  run: number
  overflow?: true
}

/** Everything a worker sends: `ready` once, then the messages of each run. */
export type WorkerMessage =
  | ReadyMessage
  | StartedMessage
  | OutputMessage
  | CallMessage
  | CallsMessage
  | DoneMessage
  | FailedMessage
  | SpawnedMessage
  | DrawsMessage
