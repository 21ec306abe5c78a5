/**
 * Waiting that a run's abort ends: a run queued behind others (its owner's earlier runs, the
 * shared TypeScript eraser) stops waiting the moment it is aborted, whatever it waits for.
 */

/** `work`'s outcome, or a rejection with the reason `signal` aborts with, if that comes first. */
export function untilAborted<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason)
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason)
    signal.addEventListener('abort', onAbort, { once: true })
    work.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort))
  })
}
