/**
 * Imported first by main.ts and snapshot.ts. A process tier's helper starts with V8 flags for its
 * heap and stack (src/host/environments/process/helper-command.ts), and V8 rejects a code cache made under other
 * flags: Node's own modules, whose cache is built into the binary, would each be compiled anew
 * (measured on Node 20: 13 to 18 ms of CPU per start, a third of the environment's code). V8
 * read both flags when it made this thread's heap and stack, so they are set back to their
 * defaults before Node's modules load, and the cache is taken again. The heap's limit is read
 * before and after: a V8 that took the change would get the flags back.
 *
 * Never in a worker thread: V8's flags belong to the whole process, there the host's. Every worker
 * this bundle runs in is started with options of its own (`startWorker`, helper-worker.ts), which
 * hold neither flag, so the flags alone tell. Asking `worker_threads` instead would load that
 * module before the flags are set back, and pay its compile (about 5 ms a start, measured).
 */

/* eslint-disable hostile-realm/captured-builtins -- runs before any program: as the bundle loads, or as a snapshot is restored */

/** V8's own defaults: `0` lets V8 size the old generation itself; 984 KiB is its stack on 64-bit builds. */
const DEFAULTS = ['--max-old-space-size=0', '--stack-size=984']
const START_FLAGS = /^--(max-old-space-size|stack-size)=/

/** Whether this thread was started with either flag: only a process tier's helper is. */
function startedWithFlags(): boolean {
  const flags = process.execArgv
  for (let at = 0; at < flags.length; at++) if (START_FLAGS.test(flags[at]!)) return true
  return false
}

function resetFlags(v8: typeof import('node:v8')): void {
  const limit = v8.getHeapStatistics().heap_size_limit
  for (let at = 0; at < DEFAULTS.length; at++) v8.setFlagsFromString(DEFAULTS[at]!)
  if (v8.getHeapStatistics().heap_size_limit !== limit) {
    const flags = process.execArgv
    for (let at = 0; at < flags.length; at++) if (START_FLAGS.test(flags[at]!)) v8.setFlagsFromString(flags[at]!)
  }
}

// Runs as the bundle loads, before any program.
if (startedWithFlags()) {
  // Required here, not imported: a worker would pay for loading it (2 to 3 ms) for nothing.
  const v8 = require('node:v8') as typeof import('node:v8')
  // V8 restores a startup snapshot only under the flags it was made with (snapshot.ts): while one
  // is made they stay, and each process restored from it sets them back as it starts, for the
  // modules it loads after.
  if (v8.startupSnapshot.isBuildingSnapshot()) v8.startupSnapshot.addDeserializeCallback(() => resetFlags(v8))
  else resetFlags(v8)
}
