/**
 * `PtcCallRefusal`: what a binding function throws to refuse a call before doing any work
 * (its arguments do not fit the tool's schema, a precondition of the host's own). The program
 * receives the message as any failed call's, and the call trace records `refused` instead of
 * `error`, so a caller can tell "the tool failed" from "the tool never ran".
 */

/**
 * Every refusal ever made, shared through the global registry by every copy of this module (two
 * bundles of the library in one process). A WeakSet lookup runs no code of the value it is
 * given, so asking about whatever a binding function threw (a proxy, an object with a throwing
 * getter) is safe.
 */
const REFUSALS: WeakSet<object> = ((globalThis as Record<symbol, unknown>)[Symbol.for('ptc.callRefusals')] ??= new WeakSet()) as WeakSet<object>

/** Thrown by a binding function that refuses the call before doing any work. */
export class PtcCallRefusal extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'PtcCallRefusal'
    REFUSALS.add(this)
  }

  /** Whether `error` is a refusal, from this copy of the library or another. */
  static is(error: unknown): boolean {
    return typeof error === 'object' && error !== null && REFUSALS.has(error)
  }
}
