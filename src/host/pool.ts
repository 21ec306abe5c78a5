/**
 * Pre-spawned, never-used environments, so a run does not wait for worker start-up. An
 * environment leaves the pool for exactly one owner or one one-shot run and never comes back.
 * A one-shot run's replacement is spawned once the taken environment has exited: a spawn
 * started at dispatch competes with the run and its teardown for the CPU and roughly doubles
 * teardown on two cores (measured by `npm run bench`). A state owner's environment lives on,
 * so its replacement is spawned at once. Idle workers never hold the process open.
 */
import type { Environment } from './environment.js'

export class EnvironmentPool {
  private readonly _idle: Environment[] = []
  private _refill: NodeJS.Immediate | undefined
  private _closed = false

  constructor(
    private readonly _size: number,
    private readonly _spawn: () => Environment,
  ) {
    this._fill()
  }

  /** A fresh environment: a pooled one when available, otherwise a new spawn. */
  take(use: 'one-shot' | 'retained'): Environment {
    let environment: Environment | undefined
    while ((environment = this._idle.shift()) && !environment.alive);
    environment ??= this._spawn()
    environment.hold(true)
    if (use === 'retained') this._scheduleRefill()
    else void environment.exited.then(() => this._scheduleRefill())
    return environment
  }

  /** Stops refilling and disposes every idle environment. */
  async drain(): Promise<void> {
    this._closed = true
    if (this._refill) clearImmediate(this._refill)
    await Promise.all(this._idle.splice(0).map((environment) => environment.dispose()))
  }

  private _scheduleRefill(): void {
    if (this._closed || this._refill || this._idle.length >= this._size) return
    this._refill = setImmediate(() => {
      this._refill = undefined
      this._fill()
    })
    this._refill.unref()
  }

  private _fill(): void {
    while (!this._closed && this._idle.length < this._size) {
      const environment = this._spawn()
      environment.hold(false)
      this._idle.push(environment)
    }
  }
}
