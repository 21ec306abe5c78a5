/**
 * The connection: what an environment's side says, understood once for every tier. A helper's
 * frames (the process tier reads them from its descriptors, the stream tiers from tagged lines)
 * become the environment's readiness, its cwd, its end and the listener's events; a worker's
 * messages (inside a helper's frames, or posted on a thread worker's port) are checked field by
 * field and rebuilt before the run's session sees them. Everything here is untrusted: the program
 * shares the helper's descriptors and can reach its worker's ports. A frame that is not what the
 * helper sends at that moment makes the environment corrupt, and nothing more is read from it; a
 * worker message that does not fit the protocol fails the run with `protocol`.
 */
import { statSync } from 'node:fs'
import type { HelperFrame } from '../../protocol/frames.js'
import { type CallMessage, type DrawsMessage, MAX_DRAWS, MAX_DRAW_BYTES, type OutputItem, type WorkerFailureKind, type WorkerMessage } from '../../protocol/messages.js'
import type { PtcJsonValue, PtcRunFailure } from '../../seam/types.js'
import type { EnvironmentListener, Refusal } from '../environments/environment.js'
import { JsonLines } from './json-lines.js'
import type { ChannelLimits } from './frame-bounds.js'
import { unavailableMessage } from '../sandbox/confinement.js'

const DIAGNOSTIC_CHARS = 2_000

/** What V8 and Node print when an allocation fails for good. */
const OUT_OF_MEMORY = /out of memory|allocation failed|reached heap limit/i
/**
 * How V8's report of a fatal error opens (a heap at its cap prints its last collections first).
 * Literals only: the text is the program's, and a pattern with a quantifier before them would
 * backtrack over a long run of whitespace (10 000 newlines held the host for minutes).
 */
const FATAL_REPORT = /<--- Last few GCs --->|Fatal error|Fatal process out of memory|FATAL ERROR:/
/** What V8 prints when the heap reached its cap (`--max-old-space-size`), not the kernel's budget. */
const HEAP_LIMIT = /reached heap limit|javascript heap out of memory/i
/** How a process ends that V8 or Node stopped on a fatal error (`abort()`), a heap at its cap included. */
const ABORTED = /SIGABRT|code 134\b/

/** What the tier does when the helper's frames call for it. */
export interface ConnectionHooks {
  /** Whether a sandbox policy confines the helper: a failed start is then `sandbox-unavailable`. */
  readonly confined: boolean
  readonly maxMemoryMb: number
  /** A helper not ready by then never will be: its start fails and it is killed (`kill`). */
  readonly startTimeoutMs: number
  /** The helper reported ready, in `cwd`. */
  ready(cwd: string): void
  /** The helper's traffic was forged: stop reading its channels. */
  violated(): void
  /** The worker is gone or its channel was tampered with: the environment serves no more (`alive`). */
  dead?(): void
  /** The helper sent something other than `ready` first, or took too long: end it. */
  kill(): void
  /** The worker reported a spawn while no run listened: the next tidy must sweep. */
  spawnedBetweenRuns(): void
}

/** A helper's connection: its frames, and the worker messages they carry. */
export class Connection {
  readonly ready: Promise<Refusal | undefined>
  /** Traffic was forged: the environment is discarded before it serves again. */
  corrupt = false
  private _listener: EnvironmentListener | undefined
  private _started: boolean | undefined
  private _settleReady!: (refusal: Refusal | undefined) => void
  private _workerExit: PtcRunFailure | undefined
  private _diagnostics = ''
  /** The kernel ended the helper for its memory. */
  private _outOfMemory = false
  /**
   * The process's text named a failed allocation, as V8's fatal report does. The program can
   * write such text too, so it names the cause only of a process that then aborted.
   */
  private _reportedOutOfMemory = false
  /** That report's failed allocation was the heap's, at its cap (maxOldGenerationSizeMb). */
  private _heapLimit = false
  /** V8's fatal report has begun: the rest of the process's text is not the program's output. */
  private _fatal = false
  /** Why the environment was stopped over its budget, once it was. */
  private _overMessage: string | undefined
  /**
   * The helper's cwd, as far as the host moved it: a run elsewhere goes through its main thread
   * (`move`). A field, read before each run; set only here.
   */
  cwd: string | undefined
  /** A run went to the main thread, which has not answered for it yet (it may refuse the cwd). */
  private _moving = false
  private readonly _startTimer: NodeJS.Timeout

  /** The reader of a tier that hands over the helper's channel as bytes (the process tier). */
  private readonly _reader: JsonLines | undefined
  /**
   * Bytes of the helper's channel, for the tier to hand its stream's chunks to as they arrive:
   * the reader reads each line within the channel's bounds and hands it to `receive`, so a frame
   * goes from the bytes to this connection and on to the session, nothing in between.
   */
  readonly read: (chunk: Buffer) => boolean

  /** `limits`: read the helper's channel from bytes (`read`), within these bounds. */
  constructor(private readonly _hooks: ConnectionHooks, private readonly _limits?: ChannelLimits) {
    this.ready = new Promise((resolve) => (this._settleReady = resolve))
    this._reader = _limits && new JsonLines(_limits.idle, (raw) => !this.corrupt && (this.receive(raw), !this.corrupt), () => this.violation(this._reader!.refusal))
    this.read = this._reader?.push ?? (() => false)
    this._startTimer = setTimeout(() => {
      this.startTimedOut = true
      this.failStart(`the helper did not start within ${_hooks.startTimeoutMs / 1000} s`)
      this._hooks.kill()
    }, _hooks.startTimeoutMs)
    this._startTimer.unref()
  }

  /**
   * Whether the worker runs and its channel was never tampered with (the tier knows about its
   * process): a field, not a getter, since every step of a run asks.
   */
  alive = true

  /** The helper did not report ready within `startTimeoutMs`. */
  startTimedOut = false

  /** Whether a run listens: its program may be running. */
  get listening(): boolean {
    return this._listener !== undefined
  }

  get started(): boolean {
    return this._started === true
  }

  /** `processExited`: the helper's process is gone, which a new listener hears at once. */
  attach(listener: EnvironmentListener | undefined, processExited: boolean): void {
    this._listener = listener
    // Between runs only short notices come: a program left running cannot make the host parse floods for nobody.
    if (this._reader) this._reader.limits = listener ? this._limits!.busy : this._limits!.idle
    if (!listener) return
    if (this._workerExit) listener.exit(this._workerExit)
    else if (processExited) listener.exit(this._processFailure('ended'))
    else if (this.corrupt) listener.forged()
  }

  /**
   * A run in another cwd than `cwd` goes to the helper's main thread, which moves there first (or
   * refuses); everything else goes straight to the worker's inbox.
   */
  move(cwd: string): void {
    this.cwd = cwd
    this._moving = true
  }

  /** The tier refuses the run in progress before it reaches the helper. */
  refuse(failure: PtcRunFailure): void {
    this._listener?.exit(failure)
  }

  /** One parsed line of the helper's channel. */
  receive(raw: unknown): void {
    if (this.corrupt || this._started === false) return
    const frame = parseHelperFrame(raw)
    if (this._started === undefined) {
      if (frame?.type !== 'ready') {
        this.failStart(frame?.type === 'exit' ? frame.message : 'the helper sent unexpected traffic before it was ready')
        return this._hooks.kill()
      }
      this._started = true
      clearTimeout(this._startTimer)
      this.cwd = frame.cwd
      this._hooks.ready(frame.cwd)
      this._settleReady(undefined)
      return
    }
    switch (frame?.type) {
      case 'message':
        this._moving = false
        if (this._listener) deliver(this._listener, frame.message)
        else if (spawnReport(frame.message) !== undefined) this._hooks.spawnedBetweenRuns()
        return
      case 'forged':
        return this._listener?.forged()
      case 'refused': {
        // Only the main thread refuses, and only a run it was given to move for.
        if (!this._moving) return this.violation()
        this._moving = false
        const cwd = this.cwd!
        this.cwd = undefined // the helper stayed where it was
        // The helper is unchanged: the run is refused, the environment and its state stay. A cwd
        // the host cannot find either was removed after the run was admitted: not the sandbox's doing.
        if (!isDirectory(cwd)) return this._listener?.refused({ kind: 'exception', message: `the run's cwd ${cwd} no longer exists: it was removed after the run was admitted` })
        return this._listener?.refused({ kind: this._hooks.confined ? 'sandbox-unavailable' : 'exception', message: frame.message })
      }
      case 'exit':
        if (this._workerExit) return this.violation()
        this._workerExit = { kind: 'worker-exit', message: this._memoryMessage(false) ?? frame.message }
        this.alive = false
        this._hooks.dead?.()
        return this._listener?.exit(this._workerExit)
      default:
        return this.violation()
    }
  }

  /** Text the helper's process wrote to its stdout or stderr. */
  readonly output = (text: string): void => {
    // V8's fatal report names the memory failure, then prints a long native stack trace.
    const recent = this._diagnostics.slice(-100) + text
    if (OUT_OF_MEMORY.test(recent)) this._reportedOutOfMemory = true
    if (HEAP_LIMIT.test(recent)) this._heapLimit = true
    this._diagnostics = (this._diagnostics + text).slice(-DIAGNOSTIC_CHARS)
    if (!this._started || this._fatal) return
    // From V8's fatal report on, the text is the process's end, not the program's output: counted
    // as output, its kilobytes would fail the run as output-limit before its exit names the cause.
    const report = reportStart(text)
    if (report >= 0) this._fatal = true
    const printed = report >= 0 ? text.slice(0, report) : text
    if (printed) this._listener?.rawOutput(printed)
  }

  /**
   * A frame that is not one the helper sends: the program wrote to the channel. Nothing more
   * is read from it (the environment is discarded before it serves again), so whatever the
   * program keeps writing costs the host nothing. `why`: the bound the frame broke, when its
   * reader says (`JsonLines.refusal`), for the run's failure.
   */
  violation(why?: string): void {
    if (this.corrupt) return
    this.corrupt = true
    this.alive = false
    this._hooks.dead?.()
    this._hooks.violated()
    if (why === undefined) this._listener?.forged()
    else this._listener?.violation(why)
  }

  /** The kernel ended the helper for its memory. */
  outOfMemory(): void {
    this._outOfMemory = true
  }

  /** The host stopped the environment over its budget: the run fails with `message`. */
  overBudget(message: string): void {
    this._overMessage = message
  }

  /**
   * The helper could not start (or took too long): every run sent to it gets this refusal.
   * `died`: it was killed (by a signal, the OOM killer's say), which says nothing about the
   * sandbox: only a helper that failed otherwise under confinement is `sandbox-unavailable`.
   */
  failStart(problem: string, died = false): void {
    this.refuseStart(
      this._hooks.confined && !died
        ? { kind: 'sandbox-unavailable', message: unavailableMessage(problem) }
        : { kind: 'worker-exit', message: `the runtime's helper process could not start, so the program did not run: ${problem}` },
    )
  }

  /** The helper will never start, for a reason the tier knows (its sandbox refused): every run sent to it gets `refusal`. */
  refuseStart(refusal: Refusal): void {
    if (this._started !== undefined) return
    this._started = false
    clearTimeout(this._startTimer)
    this._settleReady(refusal)
  }

  /**
   * The helper's process ended (`describe` says how; `died`: killed by a signal): a start still
   * pending fails, a run hears it.
   */
  ended(describe: string, died = false): void {
    const detail = this._diagnostics.trim().split('\n').slice(-2).join(' ')
    this.failStart(`the helper ${describe} before it was ready${detail ? `: ${detail}` : ''}`, died)
    if (this._started && !this._workerExit) this._listener?.exit(this._processFailure(describe))
  }

  /** The memory failure that ended the helper, if one did; `aborted`: its process aborted, as V8 does on a failed allocation. */
  private _memoryMessage(aborted: boolean): string | undefined {
    if (this._overMessage !== undefined) return this._overMessage
    const budget = `the program exceeded its memory budget of ${this._hooks.maxMemoryMb} MiB (maxMemoryMb) and its process was stopped`
    if (this._outOfMemory) return budget
    if (!aborted || !this._reportedOutOfMemory) return undefined
    return this._heapLimit ? 'the program ran out of memory: its heap reached its cap (maxOldGenerationSizeMb) and its process was stopped' : budget
  }

  private _processFailure(describe: string): PtcRunFailure {
    const aborted = ABORTED.test(describe)
    const memory = this._memoryMessage(aborted)
    if (memory !== undefined) return { kind: 'worker-exit', message: memory }
    // V8's report may not have reached the host (the program can close descriptor 2): an abort
    // is most often the heap at its cap, so the model reads that cause beside the others.
    const why = aborted ? ': a process aborts so when it runs out of memory (its heap reached maxOldGenerationSizeMb, or its memory budget) or on a fatal error in native code' : ''
    return { kind: 'worker-exit', message: `the program's helper process ${describe} before the run completed${why}` }
  }
}

/**
 * Where V8's fatal report opens in `text`, or -1: its first line, with the blank lines, `#` and
 * whitespace V8 prints before "Fatal …" and the blank lines before its collections, found by one
 * search and one walk back (linear in `text`).
 */
function reportStart(text: string): number {
  const found = text.search(FATAL_REPORT)
  if (found < 0) return found
  if (text.startsWith('FATAL ERROR:', found)) return found
  let start = found
  if (text[start] === 'F') {
    // "Fatal …" may follow "#" and whitespace: `#\n# Fatal error in …`.
    while (start > 0 && /\s/.test(text[start - 1]!)) start--
    if (text[start - 1] === '#') start--
  }
  while (start > 0 && text[start - 1] === '\n') start--
  return start
}

/** Whether `path` is a directory on the host. */
function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory()
  } catch {
    return false
  }
}

// what the helper and its worker say ------------------------------------------------------

/** The frame `raw` (a parsed line from a helper) stands for, or `undefined` when it is not one. */
export function parseHelperFrame(raw: unknown): HelperFrame | undefined {
  if (!isObject(raw)) return undefined
  switch (raw.type) {
    case 'ready':
      return typeof raw.cwd === 'string' ? { type: 'ready', cwd: raw.cwd } : undefined
    case 'forged':
      return { type: raw.type }
    case 'message':
      return Object.hasOwn(raw, 'message') ? { type: 'message', message: raw.message } : undefined
    case 'refused':
    case 'exit':
      return typeof raw.message === 'string' ? { type: raw.type, message: raw.message } : undefined
    default:
      return undefined
  }
}

const { getPrototypeOf, prototype: ObjectPrototype } = Object

/**
 * Whether `value` is an object as the reader builds them (json-lines.ts: every object a `{}` of
 * the host's realm, so no field read reaches a getter): stricter than the project's `isRecord`,
 * which also takes a null prototype. Every value here comes from that reader; the check is kept
 * here because it runs for every frame, message, call and output item.
 */
const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && getPrototypeOf(value) === ObjectPrototype

const FAILURE_KINDS: ReadonlySet<string> = new Set<WorkerFailureKind>(['exception', 'invalid-output', 'output-limit'])
const { isArray } = Array

const isId = (value: unknown): value is number => Number.isSafeInteger(value) && (value as number) > 0

/**
 * The entry of an output message: exactly one, and a text is never empty (src/worker/output.ts
 * sends nothing for an empty write). Anything else was forged: messages of no entry or of empty
 * texts cost nothing against maxOutputBytes, so they would let a program make the host read
 * without bound.
 */
function parseItems(raw: unknown): OutputItem[] | undefined {
  if (!isArray(raw) || raw.length !== 1) return undefined
  const [item] = raw
  if (typeof item === 'string') return item === '' ? undefined : [item]
  if (isObject(item) && typeof item.attachmentId === 'string') return [{ attachmentId: item.attachmentId }]
  return undefined
}

function parseCall(raw: unknown, run: number): CallMessage | undefined {
  if (!isObject(raw) || raw.type !== 'call' || raw.run !== run) return undefined
  const { id, global, name, args } = raw
  if (!isId(id) || typeof global !== 'string' || typeof name !== 'string') return undefined
  return args === undefined ? { type: 'call', run, id, global, name } : { type: 'call', run, id, global, name, args: args as PtcJsonValue }
}

const isHex = (value: unknown) => typeof value === 'string' && value.length <= 2 * MAX_DRAW_BYTES && /^(?:[0-9a-f]{2})*$/.test(value)

/** A durable run's report of values its clocks and randomness answered, each list within `MAX_DRAWS`. */
function parseDraws(raw: Record<string, unknown>, run: number): DrawsMessage | undefined {
  const { clock, random, bytes } = raw
  const list = (value: unknown, item: (entry: unknown) => boolean) => isArray(value) && value.length <= MAX_DRAWS && value.every(item)
  if (!list(clock, Number.isFinite) || !list(random, Number.isFinite) || !list(bytes, isHex)) return undefined
  const draws: DrawsMessage = { type: 'draws', run, clock: [...(clock as number[])], random: [...(random as number[])], bytes: [...(bytes as string[])] }
  return raw.overflow === true ? { ...draws, overflow: true } : draws
}

/**
 * A hostile value named in a violation. Never `String(value)`: an object whose `toString` is not
 * a function makes that throw, inside the host's channel reader.
 */
function describe(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value.slice(0, 40))
  if (typeof value === 'number' || typeof value === 'boolean' || value === null || value === undefined) return String(value)
  return `a value of type ${typeof value}`
}

/** The pid of a subprocess report of any run (one arriving between runs still counts). */
export function spawnReport(raw: unknown): number | undefined {
  return isObject(raw) && raw.type === 'spawned' && isId(raw.pid) ? raw.pid : undefined
}

/**
 * Hands a worker message to `listener`, rebuilt, or tells it why the message breaks the protocol.
 * Should handling it ever throw, that is the program's forgery, never an exception in the host's
 * channel reader (which would end the host process).
 */
export function deliver(listener: EnvironmentListener, raw: unknown): void {
  const message = parseWorkerMessage(raw, listener.run)
  try {
    if (typeof message === 'string') listener.violation(message)
    else listener.message(message)
  } catch {
    listener.forged()
  }
}

/** Rebuilds a message from the run numbered `run`, or returns why it violates the protocol. */
function parseWorkerMessage(raw: unknown, run: number): WorkerMessage | string {
  if (!isObject(raw)) return 'a message that is not an object'
  const { type } = raw
  if (raw.run !== run) return `a message for another run (${describe(raw.run)})`
  switch (type) {
    case 'output': {
      const items = parseItems(raw.items)
      return items ? { type, run, items } : 'a malformed output message'
    }
    case 'call':
      return parseCall(raw, run) ?? 'a malformed binding call'
    case 'calls': {
      if (!isArray(raw.calls) || raw.calls.length === 0) return 'a malformed batch of binding calls'
      const calls: CallMessage[] = []
      for (const item of raw.calls) {
        const call = parseCall(item, run)
        if (!call) return 'a malformed binding call'
        calls.push(call)
      }
      return { type, run, calls }
    }
    case 'done':
      // Values are lossless JSON by the time a message is parsed: read so (json-lines.ts).
      return 'value' in raw ? { type, run, value: raw.value as PtcJsonValue } : { type, run }
    case 'failed': {
      const { kind, message } = raw
      if (typeof kind !== 'string' || !FAILURE_KINDS.has(kind) || typeof message !== 'string') return 'a malformed failure'
      const failure = { type, run, kind: kind as WorkerFailureKind, message } as const
      return {
        ...failure,
        ...(raw.initializer === true ? { initializer: true } : {}),
        ...(raw.unusable === true ? { unusable: true } : {}),
      }
    }
    case 'started':
      return { type, run }
    case 'draws':
      return parseDraws(raw, run) ?? 'a malformed report of recorded values'
    case 'spawned':
      return isId(raw.pid) ? { type, run, pid: raw.pid } : 'a malformed subprocess report'
    default:
      return `a message of unknown type ${describe(type)}`
  }
}
