/**
 * One abort listener on a signal, however many operations follow it. The broker serves every
 * fetch of a run under the run's one signal; giving each fetch its own listener on it would pass
 * Node's limit of ten per event (a `MaxListenersExceededWarning` on the host) as soon as a
 * program fetches eleven URLs at once.
 */
export class AbortFanOut {
  private readonly _entries = new Map<AbortSignal, { followers: Set<AbortController>; listener: () => void }>()

  /**
   * A signal that aborts when `signal` does, with its reason, for one operation; call `done`
   * when the operation ends, and the listener on `signal` goes with the last follower.
   */
  follow(signal: AbortSignal): { signal: AbortSignal; done: () => void } {
    const controller = new AbortController()
    if (signal.aborted) {
      controller.abort(signal.reason)
      return { signal: controller.signal, done: () => {} }
    }
    let entry = this._entries.get(signal)
    if (entry === undefined) {
      const followers = new Set<AbortController>()
      const listener = () => {
        this._entries.delete(signal)
        for (const follower of followers) follower.abort(signal.reason)
      }
      entry = { followers, listener }
      this._entries.set(signal, entry)
      signal.addEventListener('abort', listener, { once: true })
    }
    const { followers, listener } = entry
    followers.add(controller)
    const done = () => {
      followers.delete(controller)
      if (followers.size === 0 && this._entries.get(signal)?.followers === followers) {
        this._entries.delete(signal)
        signal.removeEventListener('abort', listener)
      }
    }
    return { signal: controller.signal, done }
  }
}
