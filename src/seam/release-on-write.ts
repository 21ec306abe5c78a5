/**
 * What a binding function holds for its result until the reply carrying it has left the host.
 * The egress broker charges a fetch's body to the environment's and the host's byte budgets;
 * giving the bytes back when the function resolves would let a program that never reads its
 * replies make the host buffer any number of them. So the broker registers the release here,
 * keyed by the value it resolves, and the run's call dispatcher (`run/calls.ts`) calls it once
 * the reply is written, or when the reply is dropped (the run ended, the call timed out).
 */
export const RELEASE_ON_WRITE = new WeakMap<object, () => void>()

/** The release registered for `value`, if any (a primitive has none). */
export function releaseOf(value: unknown): (() => void) | undefined {
  return typeof value === 'object' && value !== null ? RELEASE_ON_WRITE.get(value) : undefined
}
