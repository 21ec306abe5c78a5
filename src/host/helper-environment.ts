/**
 * `HelperEnvironment`: the fresh worker of one environment, hosted in a helper Node process
 * (src/helper/main.ts) instead of this one, optionally wrapped by bubblewrap. The host survives
 * anything the program does there, the program gets a real working directory, and under
 * bubblewrap its file writes and processes are confined by the kernel.
 *
 * One helper serves exactly one environment (one one-shot run, or one state owner's runs) and
 * dies with it: runs in one helper share a trust domain (any of them could forge the others'
 * traffic), so they are never shared between owners.
 */
import { type ChildProcess, spawn } from 'node:child_process'
import type { Socket } from 'node:net'
import { setTimeout as sleep } from 'node:timers/promises'
import { fileURLToPath } from 'node:url'
import { CHANNEL_FD, FrameReader, type HelperOptions, type HostFrame, encodeFrame } from '../helper/protocol.js'
import type { HostMessage } from '../protocol.js'
import type { ImageAttachmentRef } from '../seam/types.js'
import type { Environment, EnvironmentListener, EnvironmentOptions } from './environment.js'
import { parseHelperFrame } from './helper-frames.js'
import { killProcessTrees } from './processes.js'
import { checkHelperRoots } from './sandbox/mounts.js'
import { sweepHelperNamespace } from './sandbox/namespace.js'

const HELPER_FILE = fileURLToPath(new URL('./helper.js', import.meta.url))

/** Where a wrapper reads its `input` (bubblewrap's seccomp filter); the helper channel is on CHANNEL_FD. */
export const WRAPPER_INPUT_FD = 4

/** A helper that has not reported ready by then is treated as unable to start. */
const START_TIMEOUT_MS = 30_000
/** How long an unconfined helper gets to kill its program's subprocesses before SIGKILL. */
const SHUTDOWN_GRACE_MS = 2_000
/** How long disposal waits for a starting confined helper to finish setting up before killing it. */
const READY_GRACE_MS = 2_000
/** How long a settlement waits for the helper to confirm its program's subprocesses died. */
const KILL_CONFIRM_MS = 3_000
/** After the process exits, how long to wait for frames it wrote just before. */
const EXIT_DRAIN_MS = 100
const DIAGNOSTIC_CHARS = 600

export interface HelperLaunch {
  /**
   * The confining wrapper (bubblewrap), its arguments, bytes it reads from WRAPPER_INPUT_FD,
   * and the writable roots it binds; absent for an unconfined helper.
   */
  wrapper?: { command: string; args: string[]; input?: Buffer; roots?: string[] }
  /** The helper's working directory: the run's cwd. */
  cwd: string
}

export interface HelperEnvironmentOptions extends EnvironmentOptions {
  /** Longest frame accepted from the helper; longer is over-budget traffic. */
  maxFrameBytes: number
}

/** An environment whose worker lives in a helper process. */
export class HelperEnvironment implements Environment {
  readonly exited: Promise<void>
  /**
   * Resolves `undefined` once the helper runs (under its wrapper), or with the reason it could
   * not start. A run must wait for it: a helper that dies before ready means the sandbox
   * could not be established, not that the program failed.
   */
  readonly ready: Promise<string | undefined>
  /** Whether bubblewrap wraps the helper (a failed start is then `sandbox-unavailable`). */
  readonly confined: boolean
  readonly issuedImages = new Map<string, ImageAttachmentRef>()
  readonly carried = new Set<string>()
  runs = 0
  private readonly _child: ChildProcess
  private readonly _roots: readonly string[]
  private readonly _channel: Socket
  private readonly _streams: Socket[]
  private readonly _reader: FrameReader
  private _listener: EnvironmentListener | undefined
  private _started: boolean | undefined
  private _settleReady!: (problem: string | undefined) => void
  private _workerExit: { code: number; error: Error | undefined } | undefined
  private _processExited = false
  private _corrupt = false
  private _diagnostics = ''
  private _timer: NodeJS.Timeout | undefined
  /** The helper's answer to the latest sweep: nothing of the program's is left in its namespace. */
  private _alone = false
  /** The host found the program's processes where the helper said there were none: it lies. */
  private _subverted = false
  /** Kill requests awaiting the helper's `killed`, by id. */
  private readonly _kills = new Map<number, () => void>()
  private _killId = 0

  constructor(launch: HelperLaunch, options: HelperEnvironmentOptions) {
    this.confined = launch.wrapper !== undefined
    this._roots = launch.wrapper?.roots ?? []
    this._reader = new FrameReader(options.maxFrameBytes)
    const helperOptions: HelperOptions = { maxOldGenerationSizeMb: options.maxOldGenerationSizeMb, rehearsal: options.rehearsal }
    const node = [process.execPath, '--no-warnings', HELPER_FILE, JSON.stringify(helperOptions)]
    const [command, ...args] = launch.wrapper ? [launch.wrapper.command, ...launch.wrapper.args, '--', ...node] : node
    this.ready = new Promise((resolve) => (this._settleReady = resolve))
    const input = launch.wrapper?.input
    this._child = spawn(command!, args, { cwd: launch.cwd, env: {}, stdio: ['ignore', 'pipe', 'pipe', 'pipe', ...(input ? ['pipe' as const] : [])] })
    if (input) (this._child.stdio[WRAPPER_INPUT_FD] as Socket).on('error', () => undefined).end(input)
    this._channel = this._child.stdio[CHANNEL_FD] as Socket
    this._streams = [this._child.stdout as Socket, this._child.stderr as Socket, this._channel]
    // A write to a dead helper fails with EPIPE; unhandled, that 'error' would crash the host.
    for (const stream of this._streams) stream.on('error', () => undefined)
    let exited!: () => void
    this.exited = new Promise((resolve) => (exited = resolve))
    const ended = (describe: string) => void this._ended(describe).then(exited)
    this._child.on('exit', (code, signal) => ended(signal ? `was killed by ${signal}` : `exited with code ${code}`))
    this._child.on('error', (error) => {
      if (this._child.pid === undefined) ended(`could not be started (${error.message})`)
    })
    for (const stream of [this._child.stdout!, this._child.stderr!]) {
      stream.setEncoding('utf8')
      stream.on('data', (text: string) => {
        if (this._started) this._listener?.rawOutput(text)
        else this._diagnostics = (this._diagnostics + text).slice(-DIAGNOSTIC_CHARS)
      })
    }
    this._channel.on('data', (chunk: Buffer) => this._receive(chunk))
    this._timer = setTimeout(() => {
      this._fail(`the helper did not start within ${START_TIMEOUT_MS / 1000} s`)
      this._child.kill('SIGKILL')
    }, START_TIMEOUT_MS)
    this._timer.unref()
  }

  get alive(): boolean {
    return !this._processExited && this._workerExit === undefined && !this._subverted
  }

  attach(listener: EnvironmentListener | undefined): void {
    this._listener = listener
    if (!listener) return
    if (this._workerExit) listener.exit(this._workerExit.code, this._workerExit.error)
    else if (this._processExited) listener.exit(1, new Error('its helper process ended'))
    else if (this._corrupt) listener.forged()
  }

  send(message: HostMessage): void {
    if (this.alive && !this._corrupt) this._write({ type: 'relay', message })
  }

  /** Why the helper does not have its writable roots where the host checked them, or `undefined`. */
  rootsProblem(): string | undefined {
    return this._roots.length === 0 || this._child.pid === undefined ? undefined : checkHelperRoots(this._child.pid, this._roots)
  }

  /** The helper vetted the report against its own process table before relaying it. */
  adoptSubprocess(_pid: number): boolean {
    return true
  }

  /**
   * Asks the helper to kill the subprocesses its program started and resolves when it says they
   * are dead (or it exits, or after KILL_CONFIRM_MS). The helper's word is only as good as the
   * program's conduct; under bubblewrap the PID namespace is the backstop: disposal kills every
   * process in it, whatever the helper did.
   */
  killSubprocesses(thorough = false): Promise<void> {
    // A torn channel cannot carry the confirmation; such an environment is discarded anyway.
    if (this._processExited || this._corrupt) return Promise.resolve()
    const id = ++this._killId
    this._alone = false
    const answered = new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer)
        this._kills.delete(id)
        resolve()
      }
      const timer = setTimeout(done, KILL_CONFIRM_MS)
      this._kills.set(id, done)
      // Under bubblewrap the helper has a PID namespace of its own, so it may sweep it.
      this._write({ type: 'kill-subprocesses', id, sweep: this.confined, thorough })
    })
    return this.confined ? answered.then(() => this._sweepFromHost()) : answered
  }

  /** Checks the helper's answer from outside: kills what is left in its namespace; a liar is discarded. */
  private async _sweepFromHost(): Promise<void> {
    if (this._child.pid === undefined || this._processExited) return
    const { found, cleared } = await sweepHelperNamespace(this._child.pid)
    if (!cleared || (found && this._alone)) this._subverted = true
    this._alone = cleared && !this._subverted
  }

  /**
   * Under bubblewrap, disposal ends the PID namespace, killing descendants that left their group;
   * once the helper's sweep left nothing but itself there, that can happen after the result. (A
   * helper the program subverted could lie: the namespace still dies, a moment later.)
   */
  get disposalMayTrail(): boolean {
    return !this.confined || this._alone
  }

  hold(held: boolean): void {
    const method = held ? 'ref' : 'unref'
    this._child[method]()
    for (const stream of this._streams) stream[method]()
  }

  /**
   * Ends the helper and resolves after it exited. Under bubblewrap, SIGKILL to bwrap tears
   * down the PID namespace, so every descendant dies with it. An unconfined helper first gets
   * the chance to kill its program's subprocess groups (it exits when the channel closes).
   */
  async dispose(): Promise<void> {
    this._listener = undefined
    if (!this._processExited) {
      this.hold(true) // an idle (unref'd) helper would let the host exit before 'exit' arrives
      if (this.confined) {
        // Killing bubblewrap alone can leave its namespace's reaper (PID 1 inside) orphaned and
        // running for good (measured: 5 of 15 helpers disposed right after spawn), so its whole
        // tree dies, once the helper said ready: until then the tree may still be forming.
        await Promise.race([this.ready, this.exited, sleep(READY_GRACE_MS, undefined, { ref: false })])
        if (this._child.pid !== undefined) await killProcessTrees(new Set([this._child.pid]))
      } else {
        void this.killSubprocesses()
        this._channel.end()
        const grace = setTimeout(() => this._child.kill('SIGKILL'), SHUTDOWN_GRACE_MS)
        void this.exited.then(() => clearTimeout(grace))
      }
    }
    await this.exited
  }

  private _write(frame: HostFrame): void {
    this._channel.write(encodeFrame(frame))
  }

  private _fail(problem: string): void {
    if (this._started !== undefined) return
    this._started = false
    if (this._timer) clearTimeout(this._timer)
    this._settleReady(problem)
  }

  private _receive(chunk: Buffer): void {
    if (this._corrupt) return
    const frames = this._reader.push(chunk)
    if (!frames) return this._violation()
    for (const raw of frames) {
      const frame = parseHelperFrame(raw)
      if (this._started === false) return
      if (this._started === undefined) {
        if (frame?.type !== 'ready') {
          this._fail('the helper sent unexpected traffic before it was ready')
          this._child.kill('SIGKILL')
          return
        }
        this._started = true
        clearTimeout(this._timer)
        this._settleReady(undefined)
        continue
      }
      switch (frame?.type) {
        case 'message':
          this._listener?.message(frame.message)
          break
        case 'raw':
          this._listener?.rawOutput(frame.text)
          break
        case 'forged':
          this._listener?.forged()
          break
        case 'killed': {
          // An id never issued is forged; one that timed out earlier is merely late.
          if (frame.id > this._killId || frame.id < 1) return this._violation()
          if (frame.id === this._killId) this._alone = frame.alone === true
          this._kills.get(frame.id)?.()
          break
        }
        case 'exit': {
          if (this._workerExit) return this._violation()
          const error = frame.errorMessage === undefined ? undefined : Object.assign(new Error(frame.errorMessage), { code: frame.errorCode })
          this._workerExit = { code: frame.code, error }
          this._listener?.exit(frame.code, error)
          break
        }
        default:
          return this._violation()
      }
      if (this._corrupt) return
    }
  }

  /** A frame that is not one the helper sends: the program wrote to the channel. */
  private _violation(): void {
    this._corrupt = true
    for (const confirm of [...this._kills.values()]) confirm()
    this._listener?.forged()
  }

  private async _ended(describe: string): Promise<void> {
    if (this._processExited) return
    this._processExited = true
    // Frames written just before the exit may still be unread: give the pipes a moment to end.
    const closed = this._streams.map((stream) => new Promise<void>((resolve) => {
      if (stream.destroyed || stream.readableEnded) resolve()
      else stream.once('close', () => resolve())
    }))
    let drain: NodeJS.Timeout | undefined
    await Promise.race([Promise.all(closed), new Promise<void>((resolve) => (drain = setTimeout(resolve, EXIT_DRAIN_MS)))])
    clearTimeout(drain)
    const detail = this._diagnostics.trim().split('\n').slice(-2).join(' ')
    this._fail(`the helper ${describe} before it was ready${detail ? `: ${detail}` : ''}`)
    if (this._started && !this._workerExit) this._listener?.exit(1, new Error(`its helper process ${describe}`))
    for (const confirm of [...this._kills.values()]) confirm()
    for (const stream of this._streams) stream.destroy()
  }
}
