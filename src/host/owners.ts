/**
 * Retained environments, one per state owner. Runs for one owner are serialized in arrival
 * order; a run that ends in a discarding failure ends the environment and leaves a notice for
 * the next run; an environment idle for `idleMs` is released.
 */
import type { Environment } from './environment.js'
import type { Settlement } from './execution.js'

interface OwnerSlot {
  environment?: Environment
  /** Why the previous environment was lost; told to the next run once. */
  lost?: string
  tail: Promise<unknown>
  idle?: NodeJS.Timeout
  /** Aborts the run in progress (release and disposal use it). */
  abort?: (reason: string) => void
}

export type RunInEnvironment = (
  environment: Environment,
  notice: string | undefined,
  abort: AbortSignal,
) => Promise<Settlement>

const LOST: Record<string, string> = {
  timeout: 'it ran out of time',
  abort: 'it was aborted',
  'worker-exit': 'its worker exited',
  protocol: 'it broke the runtime protocol',
  'output-limit': 'it exceeded the output cap',
}

export class RetainedEnvironments {
  private readonly _slots = new Map<object, OwnerSlot>()

  constructor(
    private readonly _create: () => Environment,
    private readonly _idleMs: number,
    /** Called when a release leaves no owner here. */
    private readonly _onEmpty: () => void = () => {},
  ) {}

  get empty(): boolean {
    return this._slots.size === 0
  }

  /** Queues a run for `owner` behind its earlier runs. */
  run(owner: object, execute: RunInEnvironment): Promise<Settlement> {
    let slot = this._slots.get(owner)
    if (!slot) this._slots.set(owner, (slot = { tail: Promise.resolve() }))
    const current = slot
    const result = current.tail.then(() => this._runNow(owner, current, execute))
    current.tail = result.catch(() => undefined)
    return result
  }

  /** Aborts the owner's run in progress, ends its environment and awaits its exit. */
  async release(owner: object): Promise<void> {
    const slot = this._slots.get(owner)
    if (!slot) return
    this._slots.delete(owner)
    slot.abort?.('the state owner was released')
    if (slot.idle) clearTimeout(slot.idle)
    await slot.tail
    const environment = slot.environment
    slot.environment = undefined
    await environment?.dispose()
    if (this.empty) this._onEmpty()
  }

  async releaseAll(): Promise<void> {
    await Promise.all([...this._slots.keys()].map((owner) => this.release(owner)))
  }

  private async _runNow(owner: object, slot: OwnerSlot, execute: RunInEnvironment): Promise<Settlement> {
    if (slot.idle) clearTimeout(slot.idle)
    // The environment can die between runs (the previous program left a timer that calls
    // process.exit): that loses the state as surely as a worker-exit during a run would.
    if (slot.environment && !slot.environment.alive) {
      const dead = slot.environment
      slot.environment = undefined
      slot.lost ??= LOST['worker-exit']
      await dead.dispose()
    }
    const environment = (slot.environment ??= this._create())
    environment.hold(true)
    const notice = slot.lost && `[earlier state was lost because ${slot.lost}; this run starts in a fresh environment]\n`
    slot.lost = undefined
    const controller = new AbortController()
    slot.abort = (reason) => controller.abort(new Error(reason))
    let settlement: Settlement
    try {
      settlement = await execute(environment, notice, controller.signal)
    } finally {
      slot.abort = undefined
    }
    if (!settlement.reusable) {
      slot.environment = undefined
      // A failed initializer ran before any of the owner's programs: there was no state to lose.
      if (!settlement.initializerFailed) slot.lost = LOST[settlement.result.error?.kind ?? ''] ?? 'its environment ended'
      await environment.dispose()
    }
    slot.environment?.hold(false)
    if (this._slots.get(owner) === slot) {
      slot.idle = setTimeout(() => void this.release(owner), this._idleMs)
      slot.idle.unref()
    }
    return settlement
  }
}
