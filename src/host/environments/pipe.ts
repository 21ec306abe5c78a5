/**
 * An environment over a pipe: all a tier supplies when its environments are a helper
 * (src/helper/main.ts) reached through bytes, whether from the helper's descriptors (the process
 * and plain tiers) or from tagged lines on a stream (the stream tiers). The tier opens the pipe
 * (`PipeOpener`): it writes a frame, hands over what arrives, reports the helper's end, kills it,
 * says its busy time, and, where it can, finds what a program started (`sweep`, `audit`) and ends
 * the helper its own way at disposal (`close`, `end`). Readiness and its timeout, the frame caps
 * and forgery, cwd routing and whether the environment is alive are the connection's
 * (connection.ts), once for every tier built this way; the run's history is the host's
 * (`EnvironmentHistory`).
 *
 * Without a sweep, an environment whose program reported a subprocess is not kept, and
 * `tidy(thorough)` does not keep one it cannot search.
 */
import type { HostFrame } from '../../protocol/frames.js'
import type { HostMessage } from '../../protocol/messages.js'
import { Connection } from '../connection/connection.js'
import type { ChannelLimits } from '../connection/frame-bounds.js'
import { unavailableMessage } from '../sandbox/confinement.js'
import type { Environment, EnvironmentListener, Refusal } from './environment.js'

/** What a tier's pipe does, once opened. Only the first four are asked of every pipe. */
export interface Pipe {
  /**
   * Writes a frame to the helper's main thread (`channel`) or its worker (`inbox`); `written`
   * once it left the host. `frame` is its JSON text, without the line's end: each pipe frames it
   * its own way (a line of its own on a descriptor, or inside a tagged line).
   */
  write(frame: string, to: 'channel' | 'inbox', written?: () => void): void
  /** Ends the helper and what it started, now; its end follows through `ended`. */
  kill(): void
  /** How long the helper has been busy, in milliseconds from any fixed point (its CPU time). */
  busyMs(): number
  /** Whether the pipe keeps the host process alive (an idle environment must not). Bound: the environment hands it on as its own `hold`. */
  readonly hold: (held: boolean) => void
  /**
   * Kills what the program started, found from outside the helper; resolves whether none is
   * left. `marked`: also what carries the environment's marker (after a run that reported a
   * subprocess, or `tidy(thorough)`).
   */
  sweep?(marked: boolean): Promise<boolean>
  /** The look after a kept run's result (`Environment.audit`); without it, only a reported subprocess fails it. */
  audit?(): Promise<boolean>
  /** The helper reported ready, in `cwd`. */
  ready?(cwd: string): void
  /** A run listens (`true`) or none does: what the pipe watches or how much it reads may change. */
  listening?(listening: boolean): void
  /** The traffic was forged: stop reading (the connection reads nothing more either way). */
  pause?(): void
  /** Before a run is written: a refusal (a root the pipe finds tampered with) fails it there. */
  readonly refuses?: (message: HostMessage) => Refusal | undefined
  /** Checks a program's first subprocess report since the last tidy: false when it names someone else's process. */
  adopt?(pid: number): boolean
  /** The helper is gone or corrupt, and a tidy gives it up: kills what it may have left outside its tree. */
  abandon?(): Promise<void>
  /** Runtime disposal's first step while a run is served, in one synchronous step (`Environment.end`). */
  end?(): void
  /** Ends the helper and everything it started, its own way; resolves once all is gone. Default: `kill`, its end, `sweep`. */
  close?(): Promise<void>
  /** Resolves once what carries the helper is released too (a stream's sandbox); default: at `ended`. */
  readonly released?: Promise<void>
}

/** Where a pipe hands what arrives, and the environment's promises. Each is bound: give them to events as they are. */
export interface PipeEnds {
  /** Bytes of the helper's channel (pipes whose launch gives `channelLimits`). */
  readonly frames: (chunk: Buffer) => void
  /** One parsed frame of the helper's channel (pipes that read their own framing). */
  readonly frame: (raw: unknown) => void
  /** Traffic nobody genuine sends (bytes on the worker's inbox): forged by the program. */
  readonly forged: () => void
  /** A line the pipe's own reader refused for a bound that says why (`JsonLines.refusal`): forged by the program. */
  readonly violated: (why: string) => void
  /** Text the helper's process wrote to its stdout or stderr. */
  readonly output: (text: string) => void
  /** The kernel ended the helper for its memory. */
  readonly outOfMemory: () => void
  /** The pipe stopped the helper over its budget: the run fails with `message`. */
  readonly overBudget: (message: string) => void
  /** The helper will never start, for a reason of the deployment's (`sandbox-unavailable`). */
  readonly refuseStart: (problem: string) => void
  /**
   * The helper ended (`died`: by a signal): the environment serves no more at once, and the
   * connection hears it once `drained` (what the helper wrote just before may still arrive).
   */
  readonly ended: (describe: string, died: boolean, drained?: Promise<void>) => void
  /** The environment's readiness and its end (`Environment.exited`), for a pipe's own disposal. */
  readonly whenReady: Promise<Refusal | undefined>
  readonly whenExited: Promise<void>
}

/** Opens a tier's pipe: starts the helper and wires what arrives to `ends`. */
export type PipeOpener = (ends: PipeEnds) => Pipe

/** The pipe of a helper that could not be started: there is nothing to write to or end. */
const UNSTARTED: Pipe = { write: () => undefined, kill: () => undefined, busyMs: () => 0, hold: () => undefined }

/** Written to a fresh helper's inbox once it is ready, so its first read is not a run's (messages.ts `WarmMessage`). */
const WARM_FRAME = JSON.stringify({ type: 'relay', message: { type: 'warm' } } satisfies HostFrame)

export interface PipeLaunch {
  /** The bounds of the helper's frames (frame-bounds.ts `channelLimits`); absent: the pipe reads its own framing. */
  readonly channelLimits?: ChannelLimits
  /** How long the helper may take to report ready. */
  readonly startTimeoutMs: number
  /** The memory budget the kernel holds for the helper: what the diagnostics and a refused allocation name. */
  readonly maxMemoryMb: number
  /** Whether a sandbox policy confines the helper: a failed start is then `sandbox-unavailable`. */
  readonly confined?: boolean
  /** Whether `close` finds and kills what the program started by itself (`Environment.disposalSearches`). */
  readonly disposalSearches?: boolean
  /** The helper runs every program where it started (a host path means nothing there): a run's cwd is replaced by it. */
  readonly fixedCwd?: boolean
}

export class PipeEnvironment implements Environment {
  readonly ready: Promise<Refusal | undefined>
  readonly exited: Promise<void>
  readonly disposalSearches: boolean
  readonly maxMemoryMb: number
  private readonly _connection: Connection
  private readonly _pipe: Pipe
  private readonly _fixedCwd: boolean
  private _startCwd: string | undefined
  /** Whether a run listens (its program may be running). */
  private _listening = false
  /** The helper's end was seen: a new listener hears it at once. */
  private _ended = false
  /** Whether it can serve runs: its helper runs and its channel was never tampered with (a field: every step of a run asks). */
  alive = true
  /** A subprocess was reported since the last tidy: the next one sweeps, or gives the environment up. */
  private _spawned = false
  /** The pipe's own: whether it keeps the host process alive. */
  readonly hold: (held: boolean) => void

  constructor(launch: PipeLaunch, open: PipeOpener) {
    this.maxMemoryMb = launch.maxMemoryMb
    this.disposalSearches = launch.disposalSearches ?? false
    this._fixedCwd = launch.fixedCwd ?? false
    const connection = (this._connection = new Connection({
      confined: launch.confined ?? false,
      maxMemoryMb: launch.maxMemoryMb,
      startTimeoutMs: launch.startTimeoutMs,
      ready: (cwd) => {
        this._startCwd = cwd
        this._pipe.ready?.(cwd)
        this._pipe.write(WARM_FRAME, 'inbox')
      },
      violated: () => this._pipe.pause?.(),
      kill: () => this._pipe.kill(),
      dead: () => (this.alive = false),
      spawnedBetweenRuns: () => (this._spawned = true),
    }, launch.channelLimits))
    this.ready = connection.ready
    let exited!: () => void
    this.exited = new Promise((resolve) => (exited = resolve))
    const ends: PipeEnds = {
      frames: connection.read,
      frame: (raw) => connection.receive(raw),
      // Given to events as it is: what an event carries (a socket's bytes) is no reason.
      forged: () => connection.violation(),
      violated: (why) => connection.violation(why),
      output: connection.output,
      outOfMemory: () => connection.outOfMemory(),
      overBudget: (message) => connection.overBudget(message),
      refuseStart: (problem) => connection.refuseStart({ kind: 'sandbox-unavailable', message: unavailableMessage(problem) }),
      ended: (describe, died, drained) => {
        if (this._ended) return
        this._ended = true
        this.alive = false
        const heard = () => {
          connection.ended(describe, died)
          if (!this._pipe.released) exited()
        }
        if (drained) void drained.then(heard)
        else heard()
      },
      whenReady: this.ready,
      whenExited: this.exited,
    }
    try {
      this._pipe = open(ends)
    } catch (error) {
      // A helper the kernel would not start (`spawn` throws E2BIG for a command line too long,
      // EMFILE, ENOMEM): this environment ends unstarted, and only its run fails.
      this._pipe = UNSTARTED
      ends.ended(`could not be started (${error instanceof Error ? error.message : String(error)})`, false)
    }
    void this._pipe.released?.then(exited)
    this.hold = this._pipe.hold
  }

  attach(listener: EnvironmentListener | undefined): void {
    this._listening = listener !== undefined
    this._pipe.listening?.(this._listening && this.alive)
    this._connection.attach(listener, this._ended)
  }

  send(message: HostMessage, written?: () => void): void {
    if (!this.alive) return
    if (message.type === 'run') {
      const refusal = this._pipe.refuses?.(message)
      if (refusal) return this._connection.refuse(refusal)
      if (this._fixedCwd) message = { ...message, cwd: this._startCwd! }
    }
    // The host's own frame, of its own realm: plain JSON text (the helper's side writes with jsonText).
    const frame = JSON.stringify({ type: 'relay', message } satisfies HostFrame)
    // Only a run may have to move the helper first (the connection knows where it is).
    if (message.type === 'run' && message.cwd !== this._connection.cwd) {
      this._connection.move(message.cwd)
      return this._pipe.write(frame, 'channel')
    }
    // Written once it left the host: a worker that stops reading leaves it pending.
    this._pipe.write(frame, 'inbox', written)
  }

  /** Only the first report since the last tidy is checked (by the pipe): the sweep finds the rest from outside. */
  adoptSubprocess(pid: number): boolean {
    if (this._spawned) return true
    this._spawned = true
    return this._pipe.adopt?.(pid) ?? true
  }

  async tidy(thorough: boolean): Promise<boolean> {
    if (!this.alive) {
      await this._pipe.abandon?.()
      return false
    }
    const reported = thorough || this._spawned
    this._spawned = false
    if (!reported) return true
    // An environment that died meanwhile is not kept, whatever the sweep found.
    return this._pipe.sweep !== undefined && (await this._pipe.sweep(true)) && this.alive
  }

  async audit(): Promise<boolean> {
    if (!this.alive) return false
    return this._pipe.audit ? (await this._pipe.audit()) && this.alive : !this._spawned
  }

  get startTimedOut(): boolean {
    return this._connection.startTimedOut
  }

  busyMs(): number {
    return this._ended ? 0 : this._pipe.busyMs()
  }

  end(): void {
    if (this._listening && !this._ended) this._pipe.end?.()
  }

  async dispose(): Promise<void> {
    if (this._listening) this.attach(undefined)
    if (this._pipe.close) return this._pipe.close()
    if (!this._ended) {
      this._pipe.hold(true) // an idle (unref'd) pipe would let the host exit before the helper's end arrives
      this._pipe.kill()
    }
    await this.exited
    await this._pipe.sweep?.(true)
  }
}
