/**
 * The stream and container tiers' environments: the helper of one environment, reached over a
 * byte stream the deployer opens (a container's stdio, a socket into a remote sandbox).
 * At its far end the stream entry (src/helper/stream-entry.ts) starts the helper there and
 * carries its channel, the worker's inbox and its output over the stream, one tagged line each
 * (src/protocol/frames.ts). The frames are the process tier's, read with the same checks
 * (the connection, src/host/connection/connection.ts): deadlines, budgets and forgery end a run the same way.
 *
 * What differs is where the boundary is. The host cannot read the far machine's processes, so
 * the entry kills what a program left between runs and reports busy time, and the host trusts
 * neither answer beyond the run: the environment's end is the stream's close and the sandbox's
 * release by the deployer's provider (the container tier's `podman rm -f`).
 *
 * The tier supplies its pipe (`StreamPipe`): the tagged lines, the entry's version handshake,
 * its sweep and busy reports, and the sandbox's acquisition and release. The environment around
 * it is `PipeEnvironment` (`../pipe.ts`), as for every helper tier.
 */
import { randomUUID } from 'node:crypto'
import { setTimeout as sleep } from 'node:timers/promises'
import { type EntryLine, type HelperOptions, type HostLine, STREAM_PROTOCOL_VERSION, encodeLine, parseEntryLine } from '../../../protocol/frames.js'
import { type ChannelLimits, type FrameBudget, channelLimits, frameBytes } from '../../connection/frame-bounds.js'
import { JsonLines } from '../../connection/json-lines.js'
import { nodeBuild } from '../../../system/memory-limit.js'
import { type Pipe, type PipeEnds, PipeEnvironment } from '../pipe.js'
import { type PtcByteStream, type PtcSandbox, PtcSandboxLost } from './provider.js'

/** A helper that has not reported ready by then is treated as unable to start. */
const START_TIMEOUT_MS = 60_000
/** How long the host waits for the entry's sweep before it gives up on the environment. */
const SWEEP_TIMEOUT_MS = 5_000
/** How long a far helper's death by a signal waits for the stream to say its sandbox was lost. */
const LOST_GRACE_MS = 250
/** How long disposal waits for the deployer's stream to close once destroyed. */
const CLOSE_TIMEOUT_MS = 10_000
/**
 * The longest line accepted while no run listens: short notices, and output the helper wrote
 * (a read of up to 64 KiB, which JSON escaping may make six times longer).
 */
const IDLE_LINE_BYTES = 6 * 64 * 1024 + 1024
/**
 * What an environment may send between runs, in all: a kept environment's leftovers that keep
 * writing would otherwise have the host parse their lines until it is released (`idleMs`).
 * Past it the traffic is forged, nothing more is read, and the environment is discarded.
 */
const IDLE_BYTES = 1024 * 1024

export interface StreamLaunch {
  /** Acquires the environment's sandbox: the deployer's provider, bound to the environment's id and budgets. */
  acquire: (signal: AbortSignal) => PtcSandbox | Promise<PtcSandbox>
  helper: Omit<HelperOptions, 'subprocessMarker'>
  maxMemoryMb: number
  /** The budgets the helper's frames are read within, as they arrive (frame-bounds.ts). */
  frameBudget: FrameBudget
  /** What a fresh helper of this host's Node reserves, in KiB (`dataBaseline`). */
  baselineKb: number
}

/** A far helper's environment: its pipe (`StreamPipe`) inside the environment every helper tier shares. */
export function streamEnvironment(launch: StreamLaunch): PipeEnvironment {
  return new PipeEnvironment({
    startTimeoutMs: START_TIMEOUT_MS,
    maxMemoryMb: launch.maxMemoryMb,
    // The far helper never moves: its runs happen where it started.
    fixedCwd: true,
  }, (ends) => new StreamPipe(launch, ends))
}

/** The stream's tagged lines, the entry's handshake, sweeps and busy reports, and the sandbox's release. */
class StreamPipe implements Pipe {
  readonly released: Promise<void>
  private readonly _reader: JsonLines
  /** The entry's lines' bounds while a run listens and between runs. */
  private readonly _limits: ChannelLimits
  private _stream: PtcByteStream | undefined
  private _release: (() => void | Promise<void>) | undefined
  private _releasing: Promise<void> | undefined
  /** Aborts the acquisition of a sandbox nobody wants any more. */
  private readonly _acquiring = new AbortController()
  /** Whether the entry announced the host's protocol version (its first line). */
  private _greeted = false
  private _closed = false
  private _ended = false
  /** The traffic was forged: nothing more is read. */
  private _corrupt = false
  private _listening = false
  /** How the far helper ended, while the stream is given a moment to say its sandbox was lost. */
  private _farEnded: string | undefined
  private _lostGrace: NodeJS.Timeout | undefined
  private _busyMs = 0
  /** Bytes received since the last run ended (counted only while no run listens). */
  private _idleBytes = 0
  /** Answers the pending sweep, if any. */
  private _swept: ((clean: boolean) => void) | undefined
  private _markReleased!: () => void

  constructor(launch: StreamLaunch, private readonly _ends: PipeEnds) {
    // An entry line is its frame and a few bytes of tag around it.
    this._limits = channelLimits('entry', launch.frameBudget, IDLE_LINE_BYTES, frameBytes(launch.frameBudget) + 64)
    this._reader = new JsonLines(this._limits.idle, (raw) => {
      const line = parseEntryLine(raw)
      if (line) this._entryLine(line)
      return line !== undefined && !this._corrupt && !this._over
    })
    this.released = new Promise((resolve) => (this._markReleased = resolve))
    const start: HostLine = ['start', {
      protocol: STREAM_PROTOCOL_VERSION,
      helper: { ...launch.helper, subprocessMarker: randomUUID() },
      maxMemoryMb: launch.maxMemoryMb,
      maxFrameBytes: frameBytes(launch.frameBudget),
      baseline: { node: nodeBuild(), kb: launch.baselineKb },
    }]
    void this._open(launch.acquire, start)
  }

  listening(listening: boolean): void {
    this._listening = listening
    this._reader.limits = listening ? this._limits.busy : this._limits.idle
    this._idleBytes = 0
  }

  pause(): void {
    this._corrupt = true
    this._stream?.pause?.()
  }

  /** The frame inside its tagged line (`["inbox",frame]`, what `encodeLine` writes for it). */
  write(frame: string, to: 'channel' | 'inbox', written?: () => void): void {
    if (!this._stream || this._closed) return
    this._stream.write(`["${to}",${frame}]\n`, written && (() => written()))
  }

  /** The entry kills what the program left: in the far helper's tree, its marker, or its whole namespace. */
  sweep(): Promise<boolean> {
    this._swept?.(false)
    return new Promise((resolve) => {
      const timer = setTimeout(() => done(false), SWEEP_TIMEOUT_MS)
      const done = (clean: boolean) => {
        clearTimeout(timer)
        resolve(clean && !this._ended && !this._corrupt)
      }
      this._swept = done
      this._write(['sweep'])
    })
  }

  audit(): Promise<boolean> {
    return this.sweep()
  }

  /**
   * The environment's CPU time: the stream's own account where it keeps one (a container's
   * cgroup), else the far tree's as last reported, read a little late: each read asks for the next.
   */
  busyMs(): number {
    const counted = this._stream?.busyMs?.()
    if (counted !== undefined) return counted
    if (!this._ended && !this._corrupt) this._write(['busy'])
    return this._busyMs
  }

  readonly hold = (held: boolean): void => {
    if (held) this._stream?.ref?.()
    else this._stream?.unref?.()
  }

  kill(): void {
    this._destroy()
  }

  async close(): Promise<void> {
    this.hold(true) // the close must arrive before the host may exit
    this._destroy()
    await Promise.race([this.released, sleep(CLOSE_TIMEOUT_MS, undefined, { ref: false })])
    this._closed = true
    void this._releaseSandbox() // a stream that never closed: the sandbox goes anyway
    this._markReleased()
  }

  private async _open(acquire: StreamLaunch['acquire'], start: HostLine): Promise<void> {
    let sandbox: PtcSandbox
    try {
      sandbox = await acquire(this._acquiring.signal)
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error)
      if (error instanceof PtcSandboxLost && error.refused) this._ends.refuseStart(`the sandbox provider refused it: ${reason}`)
      this._end(`could not be reached (${reason})`)
      return this._markReleased()
    }
    this._stream = sandbox.stream
    this._release = () => sandbox.release()
    const stream = sandbox.stream
    // Why the stream ended, when it says (the engine's own words): the run that was waiting hears it.
    let why: string | undefined
    let lost = false
    stream.on('error', (error: unknown) => {
      if (why !== undefined) return
      why = error instanceof Error ? error.message : String(error)
      lost = error instanceof PtcSandboxLost
    })
    stream.on('data', (chunk: Uint8Array | string) => this._receive(typeof chunk === 'string' ? Buffer.from(chunk) : chunk))
    stream.on('close', () => {
      this._closed = true
      this._end(why === undefined ? (this._farEnded ?? 'closed its stream') : lost ? `was lost with its sandbox (${why})` : `closed its stream (${why})`)
      void this._releaseSandbox().then(() => this._markReleased())
    })
    if (this._ended) return this._destroy() // disposed while it was opening
    this._write(start)
  }

  /** Releases the sandbox once: after the stream closed, or once disposal stopped waiting for it. */
  private _releaseSandbox(): Promise<void> {
    if (!this._release) return Promise.resolve() // still acquiring: released once it closes
    // A rejection is the provider's to report: the environment is gone either way.
    this._releasing ??= Promise.race([Promise.resolve().then(this._release), sleep(CLOSE_TIMEOUT_MS, undefined, { ref: false })]).then(() => undefined, () => undefined)
    return this._releasing
  }

  private _write(line: HostLine, written?: () => void): void {
    if (!this._stream || this._closed) return
    this._stream.write(encodeLine(line), written && (() => written()))
  }

  /**
   * The far helper said it ended (or the environment did): the entry sends nothing after that,
   * so nothing more is read (a far end that repeated its `ended` line armed a timer per line).
   */
  private get _over(): boolean {
    return this._ended || this._farEnded !== undefined
  }

  private _receive(chunk: Uint8Array): void {
    if (this._corrupt || this._over) return
    if (!this._listening && (this._idleBytes += chunk.length) > IDLE_BYTES) return this._ends.forged()
    const whole = this._reader.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.length))
    if (whole || this._over) return
    if (!this._greeted) return this._refuseEntry('is not a stream entry: its first line is not one')
    const why = this._reader.refusal
    if (why === undefined) this._ends.forged()
    else this._ends.violated(why)
  }

  private _entryLine(line: EntryLine): void {
    if (!this._greeted) {
      if (line[0] !== 'hello') return this._refuseEntry('announced no protocol version (an entry from before the version handshake)')
      if (line[1] !== STREAM_PROTOCOL_VERSION) return this._refuseEntry(`speaks protocol ${line[1]}`)
      this._greeted = true
      return
    }
    switch (line[0]) {
      case 'hello':
        return this._ends.forged()
      case 'channel':
        return this._ends.frame(line[1])
      case 'output':
        return this._ends.output(line[1])
      case 'forged':
        return this._ends.forged()
      case 'swept':
        this._swept?.(line[1])
        this._swept = undefined
        return
      case 'busy':
        this._busyMs = Math.max(this._busyMs, line[1])
        return
      case 'ended': {
        if (line[2]) this._ends.outOfMemory()
        const ended = () => {
          this._end(line[1])
          this._destroy() // whoever wrote it, nothing there serves again
        }
        // A far helper killed by a signal may be the first sign of a sandbox its engine is taking
        // away: the stream's own end follows a moment later and says so (a PtcSandboxLost).
        if (!line[1].startsWith('was killed by')) return ended()
        this._farEnded = line[1]
        this._lostGrace = setTimeout(ended, LOST_GRACE_MS)
        return
      }
    }
  }

  /** The far end is not the entry of this host's version: the deployment's to fix, said where its developer looks. */
  private _refuseEntry(what: string): void {
    this._ends.refuseStart(
      `the far end of the stream ${what}, and this host speaks stream protocol ${STREAM_PROTOCOL_VERSION}: ` +
        "run the stream entry of the host's own ptc-runtime there (its dist/stream-entry.cjs, with helper.cjs and worker.cjs beside it)",
    )
    this._destroy()
  }

  /** The far helper ended, or its stream did: the run in progress hears how. */
  private _end(describe: string): void {
    if (this._ended) return
    this._ended = true
    clearTimeout(this._lostGrace)
    this._swept?.(false)
    this._ends.ended(describe, false)
  }

  /** Closes the stream (its close releases the sandbox), or stops acquiring one. */
  private _destroy(): void {
    this._end('was stopped')
    if (!this._stream) return this._acquiring.abort()
    this._stream.destroy()
  }
}
