/**
 * Where environments come from and where they go. Every environment is fresh: made for one
 * one-shot run or one state owner, and never handed to anybody else. Environments for the
 * deployment's default policy are pre-spawned, so a run does not wait for start-up; others are
 * spawned on demand. An environment is keyed only by what determines it (the sandbox policy),
 * never by a run's cwd, which each run sets for itself.
 *
 * A discarded environment is disposed before the run's result is returned, within a bound: a
 * worker thread stuck in a native call cannot be stopped, so it is retired in the background
 * (never reused) and runtime disposal waits for it, again within a bound.
 */
import { setTimeout as sleep } from 'node:timers/promises'
import type { Environment } from './environment.js'
import type { Disposition } from '../run/session.js'

/** How long a run's result waits for its discarded environment to be gone. */
const DISCARD_WAIT_MS = 1_000
/** How long runtime disposal waits for retired environments before reporting them. */
const DRAIN_WAIT_MS = 10_000

export class EnvironmentSource {
  private readonly _idle: Environment[] = []
  /** Every environment spawned that has not exited, wherever it is: for `endAll`. */
  private readonly _spawned = new Set<Environment>()
  /** Disposals not awaited by a run: after-result ones and stuck ones. */
  private readonly _retiring = new Set<Promise<void>>()
  private _refill: NodeJS.Immediate | undefined
  private _closed = false

  /**
   * @param _spawn starts a fresh environment for a key (a sandbox policy's).
   * @param _pooledKey the key whose environments are pre-spawned, `_poolSize` of them.
   * @param _capacity how many more the tier can start now: no spare is spawned while it is 0.
   */
  constructor(
    private readonly _spawn: (key: string) => Environment,
    private readonly _pooledKey: string | undefined,
    private readonly _poolSize: number,
    private readonly _capacity: () => number = () => Number.POSITIVE_INFINITY,
  ) {
    this._fill()
  }

  /**
   * A never-used environment for `key`: a pre-spawned one when there is one. A one-shot run's
   * replacement is spawned once its environment has exited: a spawn started at dispatch
   * competes with the run and its teardown for the CPU, and roughly doubles teardown on two
   * cores (measured by `npm run bench`). A state owner's environment lives on, so its
   * replacement is spawned at once.
   */
  take(key: string, use: 'one-shot' | 'retained'): Environment {
    let environment: Environment | undefined
    if (key === this._pooledKey) {
      while ((environment = this._idle.shift()) && !environment.alive) this._retire(environment.dispose())
    }
    environment ??= this._spawnTracked(key)
    environment.hold(true)
    if (key === this._pooledKey) {
      if (use === 'retained') this._scheduleRefill()
      else void environment.exited.then(() => this._scheduleRefill())
    }
    return environment
  }

  /** Carries out a run's disposition; resolves when the result may be returned. */
  async settle(environment: Environment, disposition: Disposition): Promise<void> {
    if (disposition === 'keep') return
    const disposal = environment.dispose()
    if (disposition === 'discard-after-result') return this._retire(disposal)
    const gone = await Promise.race([disposal.then(() => true), sleep(DISCARD_WAIT_MS, false, { ref: false })])
    if (!gone) this._retire(disposal)
  }

  /**
   * Stops pre-spawning and starts disposing the idle environments; `drain` awaits them. Called
   * as runtime disposal begins: every one-shot run it ends would otherwise start a spare as its
   * environment exits, which disposal then waits to see ready (bubblewrap's tree half-formed
   * cannot be killed safely) and kills again, on the CPU the dying helpers need.
   */
  close(): void {
    if (this._closed) return
    this._closed = true
    if (this._refill) clearImmediate(this._refill)
    for (const environment of this._idle.splice(0)) this._retire(environment.dispose())
  }

  /**
   * Runtime disposal's first step: asks every environment spawned and not yet exited (idle,
   * serving a run, or kept for an owner) to end at once, in this tick (`Environment.end`: those
   * serving a run do). Their disposals still follow.
   */
  endAll(): void {
    for (const environment of this._spawned) environment.end?.()
  }

  /** Closes the source and awaits every environment disposed without a run waiting for it. */
  async drain(): Promise<void> {
    this.close()
    const retiring = Promise.allSettled([...this._retiring]).then(() => true)
    if (!(await Promise.race([retiring, sleep(DRAIN_WAIT_MS, false, { ref: false })]))) {
      process.emitWarning(
        `${this._retiring.size} environment(s) stuck in a native call outlived runtime disposal by ${DRAIN_WAIT_MS / 1000} s; ` +
          "their worker threads end when the call returns (isolation: 'process' kills such programs at once)",
        { code: 'PTC_STUCK_ENVIRONMENT' },
      )
    }
  }

  private _spawnTracked(key: string): Environment {
    const environment = this._spawn(key)
    this._spawned.add(environment)
    void environment.exited.then(() => this._spawned.delete(environment))
    return environment
  }

  private _retire(disposal: Promise<void>): void {
    const tracked = disposal.catch(() => undefined).finally(() => this._retiring.delete(tracked))
    this._retiring.add(tracked)
  }

  private _scheduleRefill(): void {
    if (this._closed || this._refill || this._pooledKey === undefined || this._idle.length >= this._poolSize) return
    this._refill = setImmediate(() => {
      this._refill = undefined
      this._fill()
    })
    this._refill.unref()
  }

  private _fill(): void {
    while (!this._closed && this._pooledKey !== undefined && this._idle.length < this._poolSize && this._capacity() > 0) {
      const environment = this._spawnTracked(this._pooledKey)
      environment.hold(false)
      this._idle.push(environment)
    }
  }
}
