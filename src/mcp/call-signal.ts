/**
 * A signal for one `callTool` that follows the run's signal only while the call is in flight.
 * The SDK adds an abort listener to the signal it is given and never removes it: given the run's
 * own signal, every finished call kept a listener there, and all of them fired at the run's end,
 * each sending the server a cancellation of a call long answered.
 */
export async function whileInFlight<T>(signal: AbortSignal, work: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const own = new AbortController()
  const follow = () => own.abort(signal.reason)
  if (signal.aborted) follow()
  else signal.addEventListener('abort', follow, { once: true })
  try {
    return await work(own.signal)
  } finally {
    signal.removeEventListener('abort', follow)
  }
}
