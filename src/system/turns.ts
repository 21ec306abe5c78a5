/**
 * Turns for the host's synchronous process work. Each environment's sweep or kill is a few small
 * /proc reads and signals (a signal to a namespace's reaper alone was measured at about a
 * millisecond on a loaded machine), but a runtime disposed with a hundred runs in flight starts a
 * hundred of them in the same tick, and together they would hold the host's event loop for a
 * tenth of a second or more. So they queue here and run one after another, and the queue gives
 * the event loop back once a turn has used `TURN_MS`: timers, I/O and the host's other work get
 * in between.
 */
import { locateCommand } from './commands.js'

/** The longest the queue holds the event loop before it yields. */
const TURN_MS = 5

interface Step {
  run(): void
}

const queue: Step[] = []
let scheduled = false

function drain(): void {
  scheduled = false
  const until = performance.now() + TURN_MS
  while (queue.length > 0) {
    queue.shift()!.run()
    if (queue.length > 0 && performance.now() >= until) return schedule()
  }
}

function schedule(): void {
  if (scheduled) return
  scheduled = true
  // A fresh immediate runs in the next iteration of the event loop, after its timers and I/O.
  setImmediate(drain)
}

/**
 * Runs `work` in a later turn of the event loop, after the work queued before it; resolves with
 * what it returned, or rejects with what it threw.
 */
export function inTurn<T>(work: () => T): Promise<T> {
  return new Promise((resolve, reject) => {
    queue.push({
      run() {
        try {
          resolve(work())
        } catch (error) {
          reject(error as Error)
        }
      },
    })
    schedule()
  })
}

/**
 * Helpers torn down at once. Killing a helper wakes every thread of it to die, and unmapping its
 * memory is real work for the kernel: a hundred killed in one go keep both cores busy with dying
 * threads for a quarter of a second. Where helpers run in the SCHED_IDLE class (`chrt` is
 * installed: memory-limit.ts), they die in it too and the host always comes first, so all of
 * them are killed at once and none spins on while it waits its turn; elsewhere, at `nice` 10
 * alone, the host would wait behind them, so a few die at a time.
 */
const TEARDOWNS = (locateCommand('chrt') ?? locateCommand('chrt', '/usr/bin:/bin')) === undefined ? 8 : Number.POSITIVE_INFINITY
let tearingDown = 0
const teardownQueue: Array<() => void> = []

/** Runs `work` (the kill of one helper, until it has exited) once fewer than `TEARDOWNS` others run. */
export async function asTeardown<T>(work: () => Promise<T>): Promise<T> {
  if (tearingDown < TEARDOWNS) tearingDown++
  else await new Promise<void>((resolve) => teardownQueue.push(resolve))
  try {
    return await work()
  } finally {
    // The slot passes straight to the next waiting teardown.
    const next = teardownQueue.shift()
    if (next) next()
    else tearingDown--
  }
}
