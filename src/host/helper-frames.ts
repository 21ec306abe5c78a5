/**
 * What a helper says, understood the same way on every tier that hosts one (the process tier
 * here, the stream tiers far away): its start, its frames, its output and its end, turned into
 * the environment's readiness and the listener's events. Every frame is untrusted (the program
 * shares the helper's descriptors): one that is not what the helper sends at that moment makes
 * the environment corrupt, and nothing more is read from it.
 */
import { statSync } from 'node:fs'
import { parseHelperFrame } from '../frames.js'
import type { HostMessage } from '../protocol.js'
import type { PtcRunFailure } from '../seam/types.js'
import { type EnvironmentListener, type Refusal, deliver } from './environment.js'
import { isSpawnReport } from './messages.js'
import { unavailableMessage } from './sandbox/confinement.js'

const DIAGNOSTIC_CHARS = 2_000

/** What V8 and Node print when an allocation fails for good. */
const OUT_OF_MEMORY = /out of memory|allocation failed|reached heap limit/i

/** What the tier does when the helper's frames call for it. */
export interface HelperFramesHooks {
  /** Whether a sandbox policy confines the helper: a failed start is then `sandbox-unavailable`. */
  readonly confined: boolean
  readonly maxMemoryMb: number
  /** The helper reported ready, in `cwd`. */
  ready(cwd: string): void
  /** The helper's traffic was forged: stop reading its channels. */
  violated(): void
  /** The helper sent something other than `ready` first: end it. */
  kill(): void
  /** The worker reported a spawn while no run listened: the next tidy must sweep. */
  spawnedBetweenRuns(): void
}

export class HelperFrames {
  readonly ready: Promise<Refusal | undefined>
  /** Traffic was forged: the environment is discarded before it serves again. */
  corrupt = false
  private _listener: EnvironmentListener | undefined
  private _started: boolean | undefined
  private _settleReady!: (refusal: Refusal | undefined) => void
  private _workerExit: PtcRunFailure | undefined
  private _diagnostics = ''
  private _outOfMemory = false
  /** Why the environment was stopped over its budget, once it was. */
  private _overMessage: string | undefined
  /** The helper's cwd, as far as the host moved it: runs elsewhere go through its main thread. */
  private _cwd: string | undefined
  /** A run went to the main thread, which has not answered for it yet (it may refuse the cwd). */
  private _moving = false

  constructor(private readonly _hooks: HelperFramesHooks) {
    this.ready = new Promise((resolve) => (this._settleReady = resolve))
  }

  /** Whether the worker runs and its channel was never tampered with (the tier knows about its process). */
  get alive(): boolean {
    return this._workerExit === undefined && !this.corrupt
  }

  get started(): boolean {
    return this._started === true
  }

  /** `processExited`: the helper's process is gone, which a new listener hears at once. */
  attach(listener: EnvironmentListener | undefined, processExited: boolean): void {
    this._listener = listener
    if (!listener) return
    if (this._workerExit) listener.exit(this._workerExit)
    else if (processExited) listener.exit(this._processFailure('ended'))
    else if (this.corrupt) listener.forged()
  }

  /**
   * Where `message` goes: a run in another cwd to the helper's main thread, which moves there
   * first; everything else straight to the worker's inbox.
   */
  route(message: HostMessage): 'channel' | 'inbox' {
    if (message.type !== 'run' || message.cwd === this._cwd) return 'inbox'
    this._cwd = message.cwd
    this._moving = true
    return 'channel'
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
      this._cwd = frame.cwd
      this._hooks.ready(frame.cwd)
      this._settleReady(undefined)
      return
    }
    switch (frame?.type) {
      case 'message':
        this._moving = false
        if (this._listener) deliver(this._listener, frame.message)
        else if (isSpawnReport(frame.message)) this._hooks.spawnedBetweenRuns()
        return
      case 'forged':
        return this._listener?.forged()
      case 'refused': {
        // Only the main thread refuses, and only a run it was given to move for.
        if (!this._moving) return this.violation()
        this._moving = false
        const cwd = this._cwd!
        this._cwd = undefined // the helper stayed where it was
        // The helper is unchanged: the run is refused, the environment and its state stay. A cwd
        // the host cannot find either was removed after the run was admitted: not the sandbox's doing.
        if (!isDirectory(cwd)) return this._listener?.refused({ kind: 'exception', message: `the run's cwd ${cwd} no longer exists: it was removed after the run was admitted` })
        return this._listener?.refused({ kind: this._hooks.confined ? 'sandbox-unavailable' : 'exception', message: frame.message })
      }
      case 'exit':
        if (this._workerExit) return this.violation()
        this._workerExit = { kind: 'worker-exit', message: this._memoryMessage() ?? frame.message }
        return this._listener?.exit(this._workerExit)
      default:
        return this.violation()
    }
  }

  /** Text the helper's process wrote to its stdout or stderr. */
  output(text: string): void {
    // V8's fatal report names the memory failure, then prints a long native stack trace.
    if (OUT_OF_MEMORY.test(this._diagnostics.slice(-100) + text)) this._outOfMemory = true
    this._diagnostics = (this._diagnostics + text).slice(-DIAGNOSTIC_CHARS)
    if (this._started) this._listener?.rawOutput(text)
  }

  /**
   * A frame that is not one the helper sends: the program wrote to the channel. Nothing more
   * is read from it (the environment is discarded before it serves again), so whatever the
   * program keeps writing costs the host nothing.
   */
  violation(): void {
    if (this.corrupt) return
    this.corrupt = true
    this._hooks.violated()
    this._listener?.forged()
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

  private _memoryMessage(): string | undefined {
    if (this._overMessage !== undefined) return this._overMessage
    if (!this._outOfMemory) return undefined
    return `the program exceeded its memory budget of ${this._hooks.maxMemoryMb} MiB (maxMemoryMb) and its process was stopped`
  }

  private _processFailure(describe: string): PtcRunFailure {
    return { kind: 'worker-exit', message: this._memoryMessage() ?? `the program's helper process ${describe} before the run completed` }
  }
}

/** Whether `path` is a directory on the host. */
function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory()
  } catch {
    return false
  }
}
