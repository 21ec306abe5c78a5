/**
 * The longest the host's event loop went without a turn while `work` ran, in ms. `work` starts
 * inside, after the first tick is taken, so a synchronous block at its start counts too.
 */
export async function longestStall<T>(work: () => Promise<T>): Promise<{ result: T; stallMs: number }> {
  let stallMs = 0
  let last = performance.now()
  const timer = setInterval(() => {
    const now = performance.now()
    stallMs = Math.max(stallMs, now - last)
    last = now
  }, 5)
  try {
    return { result: await work(), stallMs }
  } finally {
    clearInterval(timer)
  }
}
