/**
 * `isolation: { stream }`: every environment is a helper at the far end of a byte stream the
 * deployer opens: a container's stdio, a socket into a Kubernetes agent-sandbox pod, an E2B
 * sandbox's process. The far end runs the stream entry (`node stream-entry.cjs`, shipped in
 * the package's dist), and the boundary is whatever the stream leads into: closing the stream
 * must delete it. Programs run in the far helper's working directory.
 */
import { randomUUID } from 'node:crypto'
import { rehearsalProgram } from '../../run/programs.js'
import { StreamEnvironment } from './environment.js'
import { frameBudget } from '../../connection/frame-bounds.js'
import { dataBaseline } from '../../../system/memory-limit.js'
import type { Tier, TierSetting } from '../tier.js'

/**
 * A byte stream both ways, as Node's streams and sockets are: a `net.Socket`, a `Duplex`, or a
 * child's stdin and stdout joined with `Duplex.from({ readable, writable })`. Destroying it must
 * end what it leads into, and it emits `close` once that is gone.
 */
export interface PtcByteStream {
  /** Sends lines to the far end; `callback` once they are out of the host's hands. */
  write(data: string, callback?: (error?: Error | null) => void): unknown
  /** `data`: bytes (or text) from the far end; `close`: the far end is gone; `error`: ignored, `close` must follow. */
  on(event: 'data' | 'close' | 'error', listener: (...args: any[]) => void): unknown
  /** Ends the environment: closes the stream and deletes what it leads into. */
  destroy(): unknown
  /** Optional, as on streams: stops the flow once the far end's traffic is forged. */
  pause?(): unknown
  /** Optional, as on sockets: an idle environment's stream is unref'd so it never keeps the host alive. */
  unref?(): unknown
  /** Optional: undoes `unref` while the environment serves a run. */
  ref?(): unknown
  /**
   * Optional: the CPU time in ms of everything the environment runs, as the sandbox's own
   * accounting counts it (a container's cgroup), which a program cannot forge or stall. A held
   * run's budget is charged with it; `undefined` (or absent) leaves that to the entry's report.
   * Answer the same way (a number, or undefined) for the environment's whole life.
   */
  busyMs?(): number | undefined
}

/** What a stream factory is told about the environment it opens a stream for. */
export interface PtcStreamRequest {
  /** Unique per environment: a name for the sandbox the stream leads into. */
  readonly id: string
}

/** Opens the stream of one new environment; a rejection fails the runs sent to it (`worker-exit`). */
export type PtcStreamFactory = (request: PtcStreamRequest) => PtcByteStream | Promise<PtcByteStream>

export class StreamTier implements Tier {
  readonly confines = false
  /** The host's paths mean nothing at the far end (`StreamEnvironment.send` runs every program where the helper started). */
  readonly fixedCwd = "the far helper's working directory"
  private _setting!: TierSetting

  constructor(
    private readonly _open: PtcStreamFactory,
    readonly name = 'stream',
  ) {}

  private _baselineKb = 0

  async start(setting: TierSetting): Promise<void> {
    this._setting = setting
    this._baselineKb = await dataBaseline(setting.config.maxOldGenerationSizeMb)
  }

  spawn(): StreamEnvironment {
    const { config } = this._setting
    const request = { id: randomUUID() }
    return new StreamEnvironment({
      open: () => this._open(request),
      helper: { maxOldGenerationSizeMb: config.maxOldGenerationSizeMb, rehearsal: rehearsalProgram() },
      maxMemoryMb: config.maxMemoryMb,
      frameBudget: frameBudget(config),
      baselineKb: this._baselineKb,
    })
  }
}
