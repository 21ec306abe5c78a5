/**
 * Retained state: one environment per state owner, and the owner's runs in arrival order. A
 * queued run whose signal fires settles at once and never runs; `release` aborts the run in
 * progress and every queued one. When state is lost (a failure discarded the environment, the
 * sandbox policy changed, the owner was idle for `idleMs`), the owner's next run is told once.
 */
import type { PtcRunResult } from '../../seam/types.js'
import type { Environment } from '../environments/environment.js'
import type { EnvironmentKey } from '../environments/pool.js'
import { EXITED_NOTICE, UNSTOPPED_NOTICE, lostNotice } from './endings.js'
import type { Disposition, Settlement } from './session.js'
import { abortMessage } from './foreign-message.js'

/** Runs one program on the owner's environment; `notice` is the line it must print first. */
export type ExecuteRetained = (environment: Environment, notice: string | undefined, signal: AbortSignal) => Promise<Settlement>

export interface OwnerHooks<K extends EnvironmentKey> {
  /**
   * A never-used environment for `key` (the sandbox policy the run needs); `retry`: the run's
   * first environment died before its program started.
   */
  take(key: K, retry?: boolean): Environment
  /** Disposes or keeps `environment` as its last run decided; resolves once that is done. */
  settle(environment: Environment, disposition: Disposition): Promise<void>
  /** The result of a run that was aborted before it started. */
  aborted(message: string): PtcRunResult
}

interface Ticket<K extends EnvironmentKey> {
  key: K
  execute: ExecuteRetained
  signal: AbortSignal
  /** Aborts the run once it started (release and disposal use it). */
  controller: AbortController
  resolve(result: PtcRunResult): void
  onAbort(): void
}

interface Slot<K extends EnvironmentKey> {
  environment?: Environment
  /** The key the environment was made for. */
  key?: K
  queue: Ticket<K>[]
  running?: Ticket<K>
  idle?: NodeJS.Timeout
  /** Set by `release` while a run is in progress: called when it has settled. */
  wake?: () => void
}

export class OwnerQueues<K extends EnvironmentKey> {
  private readonly _slots = new Map<object, Slot<K>>()
  /** Notices for owners whose environment is gone; weak, so a forgotten owner costs nothing. */
  private readonly _notices = new WeakMap<object, string>()

  constructor(
    private readonly _hooks: OwnerHooks<K>,
    private readonly _idleMs: number,
  ) {}

  /** Queues a run for `owner` behind its earlier runs; resolves with its result. */
  run(owner: object, key: K, execute: ExecuteRetained, signal: AbortSignal): Promise<PtcRunResult> {
    let slot = this._slots.get(owner)
    if (!slot) this._slots.set(owner, (slot = { queue: [] }))
    const current = slot
    return new Promise((resolve) => {
      const ticket: Ticket<K> = {
        key,
        execute,
        signal,
        controller: new AbortController(),
        resolve,
        onAbort: () => {
          // Still queued: it leaves the queue and never runs; the owner's state is untouched.
          const index = current.queue.indexOf(ticket)
          if (index === -1) return
          current.queue.splice(index, 1)
          resolve(this._hooks.aborted(abortMessage(signal.reason)))
          this._forgetIfEmpty(owner, current)
        },
      }
      current.queue.push(ticket)
      signal.addEventListener('abort', ticket.onAbort, { once: true })
      void this._pump(owner, current)
    })
  }

  /**
   * Aborts the owner's run in progress and every queued run, then ends its environment. The
   * owner may be used again afterwards and starts fresh, with no notice.
   */
  async release(owner: object, reason = 'the state owner was released'): Promise<void> {
    const slot = this._slots.get(owner)
    this._notices.delete(owner)
    if (!slot) return
    this._slots.delete(owner)
    for (const ticket of slot.queue.splice(0)) {
      ticket.signal.removeEventListener('abort', ticket.onAbort)
      ticket.resolve(this._hooks.aborted(reason))
    }
    slot.running?.controller.abort(new Error(reason))
    if (slot.idle) clearTimeout(slot.idle)
    if (slot.running) await new Promise<void>((resolve) => (slot.wake = resolve))
    const environment = slot.environment
    slot.environment = undefined
    if (environment) await this._hooks.settle(environment, 'discard')
    this._notices.delete(owner)
  }

  async releaseAll(reason: string): Promise<void> {
    await Promise.all([...this._slots.keys()].map((owner) => this.release(owner, reason)))
  }

  private async _pump(owner: object, slot: Slot<K>): Promise<void> {
    if (slot.running) return
    const ticket = slot.queue.shift()
    if (!ticket) return
    ticket.signal.removeEventListener('abort', ticket.onAbort)
    slot.running = ticket
    if (slot.idle) clearTimeout(slot.idle)
    let notice = this._notices.get(owner)
    this._notices.delete(owner)
    let environment = slot.environment
    if (environment && (!environment.alive || slot.key?.id !== ticket.key.id)) {
      // The environment died between runs (a timer the last program left called process.exit)
      // or the run needs another sandbox policy: either way the state is gone.
      notice = environment.alive ? lostNotice('the sandbox policy changed') : EXITED_NOTICE
      slot.environment = undefined
      await this._hooks.settle(environment, 'discard')
      environment = undefined
    }
    if (!environment) {
      environment = slot.environment = this._hooks.take(ticket.key)
      slot.key = ticket.key
    }
    environment.hold(true)
    const signal = AbortSignal.any([ticket.signal, ticket.controller.signal])
    let settlement = await ticket.execute(environment, notice, signal)
    if (settlement.unstarted && !signal.aborted) {
      // The environment died before the program started (its helper was killed between runs):
      // nothing of the program ran, so it runs once more in a fresh environment, told of the
      // state that was lost.
      if (slot.environment === environment) slot.environment = undefined
      await this._hooks.settle(environment, settlement.disposition)
      environment = slot.environment = this._hooks.take(ticket.key, true)
      environment.hold(true)
      settlement = await ticket.execute(environment, settlement.notice ?? notice, signal)
    }
    if (settlement.disposition === 'keep') {
      environment.hold(false)
    } else {
      if (slot.environment === environment) slot.environment = undefined
      if (settlement.notice) this._notices.set(owner, settlement.notice)
      await this._hooks.settle(environment, settlement.disposition)
    }
    ticket.resolve(settlement.result)
    if (settlement.disposition === 'keep') {
      // The caller's continuation runs first: the audit's /proc reads are not part of its wait.
      await new Promise((resolve) => setImmediate(resolve))
      if (!(await environment.audit())) {
        if (slot.environment === environment) slot.environment = undefined
        // Released meanwhile, the owner starts fresh without a notice.
        if (this._slots.get(owner) === slot) this._notices.set(owner, environment.alive ? UNSTOPPED_NOTICE : EXITED_NOTICE)
        await this._hooks.settle(environment, 'discard')
      }
    }
    slot.running = undefined
    if (slot.wake) return slot.wake() // released meanwhile: release() finishes the rest
    if (slot.queue.length > 0) return void this._pump(owner, slot)
    if (slot.environment) {
      slot.idle = setTimeout(() => void this._expire(owner, slot), this._idleMs)
      slot.idle.unref()
    } else {
      this._forgetIfEmpty(owner, slot)
    }
  }

  /** The owner was idle for idleMs: its environment ends, and its next run is told. */
  private async _expire(owner: object, slot: Slot<K>): Promise<void> {
    const environment = slot.environment
    if (this._slots.get(owner) !== slot || slot.running || slot.queue.length > 0 || !environment) return
    slot.environment = undefined
    this._slots.delete(owner)
    this._notices.set(owner, lostNotice(`it was idle for longer than ${this._idleMs} ms (idleMs)`))
    await this._hooks.settle(environment, 'discard')
  }

  private _forgetIfEmpty(owner: object, slot: Slot<K>): void {
    if (this._slots.get(owner) === slot && !slot.running && slot.queue.length === 0 && !slot.environment) this._slots.delete(owner)
  }
}

