/**
 * What a deployer writes to scale environments out to a sandbox engine (Kubernetes, E2B, a
 * container engine): a provider acquires one sandbox per environment, named by the
 * environment's id and sized by its budgets, hands back a byte stream into the stream entry
 * running there, and releases it when the environment ends (`isolation: { provider }`,
 * `stream.ts`). A bare stream factory (`isolation: { stream }`) is the provider whose release
 * destroys the stream.
 */

/**
 * A byte stream both ways, as Node's streams and sockets are: a `net.Socket`, a `Duplex`, or a
 * child's stdin and stdout joined with `Duplex.from({ readable, writable })`. Its far end runs
 * the stream entry (`node stream-entry.cjs` of the host's own ptc-runtime). It emits `close`
 * once it is gone; an `error` before it says why (a `PtcSandboxLost` when the engine lost the
 * sandbox).
 */
export interface PtcByteStream {
  /** Sends lines to the far end; `callback` once they are out of the host's hands. */
  write(data: string, callback?: (error?: Error | null) => void): unknown
  /** `data`: bytes (or text) from the far end; `close`: the far end is gone; `error`: why, `close` must follow. */
  on(event: 'data' | 'close' | 'error', listener: (...args: any[]) => void): unknown
  /** Closes the stream (with a bare factory, also what it leads into). */
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

/** What one environment may use, as the runtime's configuration sets it: size the sandbox to hold it. */
export interface PtcSandboxBudgets {
  /** What the program may allocate beyond a fresh helper, in MiB (`maxMemoryMb`; the entry enforces it with `ulimit -d`). */
  readonly memoryMb: number
  /** The V8 heap cap of the environment's worker, in MiB (`maxOldGenerationSizeMb`). */
  readonly heapMb: number
  /** Processes and threads the environment may have at once (`maxProcesses`). */
  readonly processes: number
  /** A run's time budget unless its request sets one, in ms (`timeoutMs`). */
  readonly timeoutMs: number
  /** The longest time budget a request may set, in ms (`maxTimeoutMs`). */
  readonly maxTimeoutMs: number
  /** How long a kept environment may wait for its owner's next run before it is released, in ms (`idleMs`). */
  readonly idleMs: number
}

/** What a provider is asked for: the sandbox of one new environment. */
export interface PtcSandboxRequest {
  /** Unique per environment: a name for its sandbox. */
  readonly id: string
  /** What the environment's programs may use, as the runtime's configuration says: size the sandbox by it. */
  readonly budgets: PtcSandboxBudgets
  /**
   * Aborted when nobody wants the environment any more (the runtime is disposed, or the start
   * timed out): stop creating the sandbox. A sandbox acquired anyway is released at once.
   */
  readonly signal: AbortSignal
}

/** One acquired sandbox. */
export interface PtcSandbox {
  /** The stream into the stream entry running in the sandbox. */
  readonly stream: PtcByteStream
  /**
   * Deletes the sandbox and what runs in it. Called once, after the host destroyed the stream,
   * whenever the environment ends (a deadline, a discard, disposal, the sandbox lost); the
   * environment counts as gone once it settles. A rejection is ignored.
   */
  release(): void | Promise<void>
}

/** Scales environments out to a sandbox engine: `isolation: { provider }`. */
export interface PtcSandboxProvider {
  /** The name the runtime reports as its `isolation`; default `'stream'`. */
  readonly name?: string
  /**
   * The sandbox of one new environment. Reject with a `PtcSandboxLost` whose `refused` is true
   * when the engine will not give one (a quota, a missing image): runs then fail as
   * `sandbox-unavailable` with its message, and a runtime whose first sandbox is refused does
   * not start. Any other rejection fails the environment's runs as `worker-exit`.
   */
  acquire(request: PtcSandboxRequest): PtcSandbox | Promise<PtcSandbox>
  /**
   * Optional: how many more sandboxes it can acquire now (a quota's headroom, a warm pool's
   * ready sandboxes). The runtime's pool keeps no spare environment while it answers 0, so
   * spares never take sandboxes the runs need; a run still asks `acquire` for its own.
   */
  capacity?(): number
}

/**
 * The engine refused a sandbox or lost one: what a provider rejects `acquire` with (`refused`:
 * a quota, a missing image) or destroys its stream with (the engine deleted the sandbox
 * mid-run). Its message is the engine's reason, and the run's failure names it:
 * `sandbox-unavailable` when refused, `worker-exit` when lost.
 */
export class PtcSandboxLost extends Error {
  /** `'PtcSandboxLost'`, as the error's stack and `String(error)` show it. */
  override readonly name = 'PtcSandboxLost'
  /** Whether the engine refused to give the sandbox at all, rather than losing one it gave. */
  readonly refused: boolean

  constructor(reason: string, options: { refused?: boolean; cause?: unknown } = {}) {
    super(reason, options.cause === undefined ? undefined : { cause: options.cause })
    this.refused = options.refused ?? false
  }
}

/** Opens the stream of one new environment; destroying it must delete what it leads into. */
export type PtcStreamFactory = (request: PtcStreamRequest) => PtcByteStream | Promise<PtcByteStream>

/** What a stream factory is told about the environment it opens a stream for. */
export interface PtcStreamRequest {
  /** Unique per environment: a name for the sandbox the stream leads into. */
  readonly id: string
}

/** `isolation: { stream }` as a provider: the stream is the sandbox, and releasing it destroys the stream. */
export function streamProvider(open: PtcStreamFactory): PtcSandboxProvider {
  return {
    async acquire({ id }) {
      const stream = await open({ id })
      return { stream, release: () => void stream.destroy() }
    },
  }
}
