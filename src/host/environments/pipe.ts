/**
 * An environment over a pipe: all a tier supplies when its environments are a helper
 * (src/helper/main.ts) reached through bytes. The tier opens the pipe (`PipeOpener`): it writes
 * a frame, hands over what arrives (the channel's bytes, the helper's stdout and stderr, bytes on
 * the worker's inbox, which only the program can have written), reports the helper's exit,
 * kills it, and says its busy time. Readiness and its timeout, the frame caps and forgery, cwd
 * routing and whether the environment is alive are the connection's (connection.ts), once for
 * every tier built this way; the run's history is the host's (`historyOf`).
 *
 * What a program started is the tier's to find, if it can (`Pipe.sweep`): without a sweep, an
 * environment whose program reported a subprocess is not kept, and `tidy(thorough)` does not keep
 * one it cannot search.
 */
import { encodeFrame } from '../../protocol/frames.js'
import type { HostMessage } from '../../protocol/messages.js'
import { Connection } from '../connection/connection.js'
import type { ChannelLimits } from '../connection/frame-bounds.js'
import type { Environment, EnvironmentListener, Refusal } from './environment.js'

/** What a tier's pipe does, once opened. */
export interface Pipe {
  /** Writes `frame` to the helper's main thread (`channel`) or its worker (`inbox`); `written` once it left the host. */
  write(frame: string, to: 'channel' | 'inbox', written?: () => void): void
  /** Ends the helper and what it started, now (SIGKILL); its exit follows through `ended`. */
  kill(): void
  /** How long the helper has been busy, in milliseconds from any fixed point (its CPU time). */
  busyMs(): number
  /** Whether the pipe keeps the host process alive (an idle environment must not). */
  hold(held: boolean): void
  /** Optional: kills what the program started, found from outside the helper; resolves whether none is left. */
  sweep?(): Promise<boolean>
}

/** Where a pipe hands what arrives. Each is bound: give them to the pipe's events as they are. */
export interface PipeEnds {
  /** Bytes of the helper's channel. */
  readonly frames: (chunk: Buffer) => void
  /** Bytes where nothing genuine arrives (the worker's inbox): forged by the program. */
  readonly forged: () => void
  /** Text the helper's process wrote to its stdout or stderr. */
  readonly output: (text: string) => void
  /** The helper's process ended, after everything it wrote was handed over; `died`: by a signal. */
  readonly ended: (describe: string, died: boolean) => void
}

/** Opens a tier's pipe: starts the helper and wires what arrives to `ends`. */
export type PipeOpener = (ends: PipeEnds) => Pipe

export interface PipeLaunch {
  /** The bounds of the helper's frames (frame-bounds.ts `channelLimits`). */
  readonly channelLimits: ChannelLimits
  /** How long the helper may take to report ready. */
  readonly startTimeoutMs: number
  /** The memory budget the kernel holds for the helper: what the diagnostics and a refused allocation name. */
  readonly maxMemoryMb: number
}

export class PipeEnvironment implements Environment {
  readonly ready: Promise<Refusal | undefined>
  readonly exited: Promise<void>
  /** Disposal kills the helper's process group, and searches nothing. */
  readonly disposalSearches = false
  readonly maxMemoryMb: number
  private readonly _connection: Connection
  private readonly _pipe: Pipe
  private _ended = false
  /** Whether it can serve runs: its helper runs and its channel was never tampered with. */
  alive = true
  /** A subprocess was reported: the pipe cannot search for it, so the environment is not kept. */
  private _spawned = false

  constructor(launch: PipeLaunch, open: PipeOpener) {
    this.maxMemoryMb = launch.maxMemoryMb
    this._connection = new Connection({
      confined: false,
      maxMemoryMb: launch.maxMemoryMb,
      startTimeoutMs: launch.startTimeoutMs,
      ready: () => undefined,
      violated: () => undefined, // the reader reads nothing more once the connection is corrupt
      kill: () => this._pipe.kill(),
      dead: () => (this.alive = false),
      spawnedBetweenRuns: () => (this._spawned = true),
    }, launch.channelLimits)
    this.ready = this._connection.ready
    let exited!: () => void
    this.exited = new Promise((resolve) => (exited = resolve))
    const connection = this._connection
    this._pipe = open({
      frames: connection.read,
      forged: connection.violation,
      output: connection.output,
      ended: (describe, died) => {
        if (this._ended) return
        this._ended = true
        this.alive = false
        connection.ended(describe, died)
        exited()
      },
    })
  }

  attach(listener: EnvironmentListener | undefined): void {
    this._connection.attach(listener, this._ended)
  }

  send(message: HostMessage, written?: () => void): void {
    if (!this.alive) return
    const frame = encodeFrame({ type: 'relay', message })
    if (this._connection.route(message) === 'channel') this._pipe.write(frame, 'channel')
    else this._pipe.write(frame, 'inbox', written)
  }

  adoptSubprocess(): boolean {
    this._spawned = true
    return true
  }

  async tidy(thorough: boolean): Promise<boolean> {
    if (!this.alive) return false
    if (!thorough && !this._spawned) return true
    this._spawned = false
    return this._pipe.sweep !== undefined && (await this._pipe.sweep())
  }

  async audit(): Promise<boolean> {
    return this.alive && !this._spawned
  }

  busyMs(): number {
    return this._ended ? 0 : this._pipe.busyMs()
  }

  hold(held: boolean): void {
    this._pipe.hold(held)
  }

  async dispose(): Promise<void> {
    this._connection.attach(undefined, this._ended)
    if (!this._ended) {
      this._pipe.hold(true) // an idle (unref'd) pipe would let the host exit before the helper's end arrives
      this._pipe.kill()
    }
    await this.exited
    await this._pipe.sweep?.()
  }
}
