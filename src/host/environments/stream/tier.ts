/**
 * `isolation: { provider }` and `{ stream }`: every environment is a helper at the far end of a
 * byte stream into a sandbox the deployer's provider acquires (`provider.ts`): a
 * container's stdio, a socket into a Kubernetes agent-sandbox pod, an E2B sandbox's process.
 * The far end runs the stream entry (`node stream-entry.cjs`, shipped in the package's dist),
 * and the boundary is the sandbox, which the provider releases when the environment ends.
 * Programs run in the far helper's working directory.
 */
import { randomUUID } from 'node:crypto'
import { rehearsalProgram } from '../../run/programs.js'
import { streamEnvironment } from './environment.js'
import type { Environment } from '../environment.js'
import { frameBudget } from '../../connection/frame-bounds.js'
import { dataBaseline } from '../../../system/memory-limit.js'
import type { PtcSandboxBudgets, PtcSandboxProvider } from './provider.js'
import type { Tier, TierSetting } from '../tier.js'

export class StreamTier implements Tier {
  readonly confines = false
  /** The host's paths mean nothing at the far end (its environments run every program where the helper started: `fixedCwd`). */
  readonly fixedCwd = "the far helper's working directory"
  readonly name: string
  private _setting!: TierSetting
  private _budgets!: PtcSandboxBudgets
  private _baselineKb = 0
  /** The environment `start` opened to check the deployment, handed to the first `spawn`. */
  private _first: Environment | undefined

  constructor(
    private readonly _provider: PtcSandboxProvider,
    name = _provider.name ?? 'stream',
  ) {
    this.name = name
  }

  /**
   * Opens one environment before the runtime starts: a deployment that cannot give what its
   * configuration asks (a provider that refuses, an entry of another protocol version) fails
   * here, where its developer looks, rather than in front of the model. It serves as the pool's
   * first spare, so with a pool the check costs no sandbox of its own.
   */
  async start(setting: TierSetting): Promise<void> {
    this._setting = setting
    const { config } = setting
    this._budgets = {
      memoryMb: config.maxMemoryMb,
      heapMb: config.maxOldGenerationSizeMb,
      processes: config.maxProcesses,
      timeoutMs: config.timeoutMs,
      maxTimeoutMs: config.maxTimeoutMs,
      idleMs: config.idleMs,
    }
    this._baselineKb = await dataBaseline(config.maxOldGenerationSizeMb)
    const first = this._environment()
    // The start's own bound is unref'd (a spare nobody awaits must not keep the host alive), and a
    // deployer's stream may hold nothing (an in-memory Duplex): this await must, or the host exits mid-start.
    const held = setInterval(() => undefined, 3_600_000)
    const refusal = await first.ready.finally(() => clearInterval(held))
    // Kept only where the pool takes it at once: as its first spare, while there is room for one.
    if (refusal === undefined && config.poolSize > 0 && this.capacity() > 0) return void (this._first = first)
    await first.dispose()
    if (refusal?.kind === 'sandbox-unavailable') throw new Error(refusal.message.replace('so the program did not run', 'so the runtime did not start'))
  }

  spawn(): Environment {
    const first = this._first
    this._first = undefined
    return first ?? this._environment()
  }

  capacity(): number {
    return this._provider.capacity?.() ?? Number.POSITIVE_INFINITY
  }

  /** A first environment no spawn took (the runtime was disposed at once) goes too. */
  stop(): void {
    void this._first?.dispose()
    this._first = undefined
  }

  private _environment(): Environment {
    const { config } = this._setting
    const request = { id: randomUUID(), budgets: this._budgets }
    return streamEnvironment({
      acquire: (signal) => this._provider.acquire({ ...request, signal }),
      helper: { maxOldGenerationSizeMb: config.maxOldGenerationSizeMb, rehearsal: rehearsalProgram() },
      maxMemoryMb: config.maxMemoryMb,
      frameBudget: frameBudget(config),
      baselineKb: this._baselineKb,
    })
  }
}
