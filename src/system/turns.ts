/**
 * Turns for the host's synchronous process work. Each environment's sweep or kill is a few small
 * /proc reads and signals (a signal to a namespace's reaper alone was measured at about a
 * millisecond on a loaded machine), but a runtime disposed with a hundred runs in flight starts a
 * hundred of them in the same tick, and together they would hold the host's event loop for a
 * tenth of a second or more. So they queue here and run one after another, and the queue gives
 * the event loop back once a turn has used `TURN_MS`: timers, I/O and the host's other work get
 * in between.
 */

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
 * Environments torn down at once: helpers, containers, and the thread tier's workers at
 * disposal. Killing a helper wakes every thread of it to die, and unmapping its memory is real
 * work for the kernel; every ended environment then costs the host its exit, its pipes' closes
 * and a worker's join, in whichever turns of the event loop they arrive. Ended all at once,
 * 300 idle retained environments held the host's loop for 138-427 ms on the default tier
 * (helpers in the SCHED_IDLE class still share the host's cores as one ordinary CPU group,
 * cpu-group.ts) and 232-443 ms on the thread tier; eight at a time, 10-14 and 22-36 ms, with
 * disposal as fast (`node bench/run.mjs dispose`). A spinning program waiting its turn is held
 * to its group's share meanwhile, or on the thread tier stopped first (thread/environment.ts).
 */
const TEARDOWNS = 8
let tearingDown = 0
const teardownQueue: Array<() => void> = []

/**
 * The longest one teardown holds its turn. The queue is the host's, shared by every runtime in
 * it, and an environment may never end (a thread blocked in a system call cannot be ended from
 * inside its process, corpus 149): past this, its turn passes on and it is awaited outside.
 */
const TURN_HOLD_MS = 1_000

/**
 * Runs `work` (the end of one environment, until it has exited) once fewer than `TEARDOWNS`
 * others hold a turn; resolves with what it resolves to, however long that takes.
 */
export async function asTeardown<T>(work: () => Promise<T>): Promise<T> {
  if (tearingDown < TEARDOWNS) tearingDown++
  else await new Promise<void>((resolve) => teardownQueue.push(resolve))
  let passed = false
  const pass = () => {
    if (passed) return
    passed = true
    clearTimeout(held)
    // The turn passes straight to the next waiting teardown.
    const next = teardownQueue.shift()
    if (next) next()
    else tearingDown--
  }
  const held = setTimeout(pass, TURN_HOLD_MS).unref()
  try {
    return await work()
  } finally {
    pass()
  }
}
