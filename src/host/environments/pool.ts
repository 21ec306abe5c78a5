/**
 * Where environments come from and where they go. Every environment is fresh: made for one
 * one-shot run or one state owner, and never handed to anybody else. Environments for the
 * deployment's default policy are pre-spawned, so a run does not wait for start-up; others are
 * spawned on demand. An environment is keyed only by what determines it (the sandbox policy),
 * never by a run's cwd, which each run sets for itself.
 *
 * The pool follows demand (pool-demand.ts): it grows while runs arrive faster than it refills,
 * within `poolMemoryMb`, and shrinks back to `poolSize` when they stop.
 *
 * A discarded environment is disposed before the run's result is returned, within a bound: a
 * worker thread stuck in a native call cannot be stopped, so it is retired in the background
 * (never reused) and runtime disposal waits for it, again within a bound.
 */
import { availableParallelism } from 'node:os'
import { setTimeout as sleep } from 'node:timers/promises'
import type { Environment } from './environment.js'
import { type PoolBounds, PoolDemand, SHRINK_AFTER_MS } from './pool-demand.js'
import type { Disposition } from '../run/session.js'

/** How long a run's result waits for its discarded environment to be gone. */
const DISCARD_WAIT_MS = 1_000
/** How long runtime disposal waits for retired environments before reporting them. */
const DRAIN_WAIT_MS = 10_000
/**
 * Spares starting at once, at most: each start is mostly CPU, so more than a couple per core
 * only slows every start and the runs beside them.
 */
const STARTING_AT_ONCE = 2 * availableParallelism()

/**
 * What a run's environment must be. Environments of one `id` are interchangeable; the rest of
 * a key is what spawning one needs (a sandbox policy), carried with the run that asks, so the
 * source remembers nothing per key but the pooled one.
 */
export interface EnvironmentKey {
  readonly id: string
}

export class EnvironmentSource<K extends EnvironmentKey = EnvironmentKey> {
  /** Spares, oldest first: started or still starting. */
  private readonly _idle: Environment[] = []
  /** Every environment spawned that has not exited, wherever it is: for `endAll`. */
  private readonly _spawned = new Set<Environment>()
  /** Spares that reported ready (a started one may have died since). */
  private readonly _started = new WeakSet<Environment>()
  /** Spares spawned whose start has not finished, taken or not. */
  private _starting = 0
  private readonly _demand: PoolDemand
  /** Disposals not awaited by a run (after-result ones and stuck ones), with their environments. */
  private readonly _retiring = new Map<Promise<void>, Environment>()
  private _refill: NodeJS.Immediate | undefined
  private _shrink: NodeJS.Timeout | undefined
  private _closed = false

  /**
   * @param _spawn starts a fresh environment for a key (a sandbox policy's).
   * @param _pooled the key whose environments are pre-spawned.
   * @param bounds how many: `poolSize` at least (0: none, on demand only), more under demand up to the memory cap.
   * @param _capacity how many more the tier can start now: no spare is spawned while it is 0.
   */
  constructor(
    private readonly _spawn: (key: K) => Environment,
    private readonly _pooled: K | undefined,
    bounds: PoolBounds,
    private readonly _capacity: () => number = () => Number.POSITIVE_INFINITY,
  ) {
    this._demand = new PoolDemand(bounds)
    this._fill()
  }

  /**
   * A never-used environment for `key`: a started spare when there is one, else the oldest
   * one still starting. A one-shot run's replacement is spawned once its environment has
   * exited: a spawn started at dispatch competes with the run and its teardown for the CPU,
   * and roughly doubles teardown on two cores (measured by `npm run bench`). A state owner's
   * environment lives on, so its replacement is spawned at once. `retry`: the run's first
   * environment died before its program started; a spare still starting may be dying the same
   * way (the OOM killer picks starting helpers), so only a started one or a fresh spawn will do.
   */
  take(key: K, use: 'one-shot' | 'retained', retry = false): Environment {
    let environment: Environment | undefined
    const pooled = key.id === this._pooled?.id
    if (pooled) {
      environment = this._takeSpare(retry)
      // A take that found a started spare changes only the demand's time.
      if (environment !== undefined && this._started.has(environment)) this._demand.lastTake = performance.now()
      else this._demand.took(false, performance.now())
      this._watchIdle()
    }
    environment ??= this._spawnTracked(key)
    environment.hold(true)
    if (pooled) {
      if (use === 'retained') this._scheduleRefill()
      else void environment.exited.then(() => this._scheduleRefill())
    }
    return environment
  }

  /** Carries out a run's disposition; resolves when the result may be returned. */
  async settle(environment: Environment, disposition: Disposition): Promise<void> {
    if (disposition === 'keep') return
    const disposal = environment.dispose()
    if (disposition === 'discard-after-result') return this._retire(environment, disposal)
    const gone = await Promise.race([disposal.then(() => true), sleep(DISCARD_WAIT_MS, false, { ref: false })])
    if (!gone) this._retire(environment, disposal)
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
    clearInterval(this._shrink)
    for (const environment of this._idle.splice(0)) this._retire(environment)
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
    const retiring = Promise.allSettled([...this._retiring.keys()]).then(() => true)
    if (!(await Promise.race([retiring, sleep(DRAIN_WAIT_MS, false, { ref: false })]))) {
      process.emitWarning(outlived([...this._retiring.values()]), { code: 'PTC_STUCK_ENVIRONMENT' })
    }
  }

  private _spawnTracked(key: K): Environment {
    const environment = this._spawn(key)
    this._spawned.add(environment)
    void environment.exited.then(() => this._spawned.delete(environment))
    return environment
  }

  /** The first started spare, else (unless `startedOnly`) the oldest still starting; dead ones are retired on the way. */
  private _takeSpare(startedOnly: boolean): Environment | undefined {
    for (let index = 0; index < this._idle.length; ) {
      const spare = this._idle[index]!
      if (!spare.alive) {
        this._idle.splice(index, 1)
        this._retire(spare)
      } else if (this._started.has(spare)) {
        return this._idle.splice(index, 1)[0]
      } else {
        index++
      }
    }
    return startedOnly ? undefined : this._idle.shift()
  }

  private _retire(environment: Environment, disposal = environment.dispose()): void {
    const tracked = disposal.catch(() => undefined).finally(() => this._retiring.delete(tracked))
    this._retiring.set(tracked, environment)
  }

  private _scheduleRefill(): void {
    if (this._closed || this._refill || this._starting > 0 || this._pooled === undefined || this._idle.length >= this._demand.target) return
    this._refill = setImmediate(() => {
      this._refill = undefined
      this._fill()
    })
    this._refill.unref()
  }

  /**
   * Starts spares up to the target, in generations of at most STARTING_AT_ONCE: a generation
   * starts once the last one has finished starting. Started together, the spares of one
   * generation are ready together, and back-to-back runs then find one each without waiting;
   * starts spread out would make every run wait for the next.
   */
  private _fill(): void {
    if (this._starting > 0) return
    while (!this._closed && this._pooled !== undefined && this._idle.length < this._demand.target && this._starting < STARTING_AT_ONCE && this._capacity() > 0) {
      const environment = this._spawnTracked(this._pooled)
      environment.hold(false)
      this._idle.push(environment)
      this._starting++
      void Promise.race([environment.ready, environment.exited]).then(() => {
        this._starting--
        this._started.add(environment)
        this._scheduleRefill()
      })
    }
  }

  /** While the pool is above `poolSize`, looks every SHRINK_AFTER_MS whether runs stopped coming. */
  private _watchIdle(): void {
    if (this._shrink || this._closed || !this._demand.grown) return
    this._shrink = setInterval(() => {
      if (!this._demand.shrink(performance.now())) return
      // The newest spares go first: the oldest are the likeliest to have started.
      while (this._idle.length > this._demand.target) this._retire(this._idle.pop()!)
      if (!this._demand.grown) {
        clearInterval(this._shrink)
        this._shrink = undefined
      }
    }, SHRINK_AFTER_MS)
    this._shrink.unref()
  }
}

/**
 * What the drain's warning says of the environments still being disposed: those still alive are
 * stuck (a worker thread in a native call); those that exited are still being swept for what
 * their programs started, which takes long only on a large or busy process table.
 */
function outlived(environments: readonly Environment[]): string {
  const alive = environments.filter((environment) => environment.alive).length
  const parts: string[] = []
  if (alive > 0) {
    parts.push(`${alive} environment(s) stuck in a native call outlived runtime disposal by ${DRAIN_WAIT_MS / 1000} s; their worker threads end when the call returns (isolation: 'process' kills such programs at once)`)
  }
  if (environments.length > alive) {
    parts.push(`${environments.length - alive} environment(s) exited, but the search for subprocesses their programs started had not finished after ${DRAIN_WAIT_MS / 1000} s (the machine's process table is large or busy); it goes on in the background`)
  }
  return parts.join('; ')
}
