/** A turn later than this counts as the loop held, not as a timer's ordinary lateness. */
const HELD_FROM_MS = 50

/**
 * The longest the host's event loop went without a turn while `work` ran, in ms, and how long
 * it was held in all (`heldMs`: the gaps over HELD_FROM_MS, summed). `work` starts inside,
 * after the first tick is taken, so a synchronous block at its start counts too.
 */
export async function longestStall<T>(work: () => Promise<T>): Promise<{ result: T; stallMs: number; heldMs: number }> {
  let stallMs = 0
  let heldMs = 0
  let last = performance.now()
  const turn = () => {
    const now = performance.now()
    stallMs = Math.max(stallMs, now - last)
    if (now - last > HELD_FROM_MS) heldMs += now - last
    last = now
  }
  const timer = setInterval(turn, 5)
  try {
    const result = await work()
    // A block just before `work` settled may have had no timer turn after it.
    turn()
    return { result, stallMs, heldMs }
  } finally {
    clearInterval(timer)
  }
}
