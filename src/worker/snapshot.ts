/**
 * The process tier helper's entry when it starts from a V8 startup snapshot
 * (src/host/environments/process/helper-snapshot.ts): `node --build-snapshot` runs this file once
 * per host process, which loads the environment's modules and captures what they capture, and
 * the snapshot then holds that heap. Each helper restored from it starts the environment as
 * main.ts would, with its modules already loaded. No program runs before the snapshot is made.
 *
 * What the snapshot holds is what the modules do as they load; what belongs to one process is
 * read as the environment starts instead: its PIDs and cwd (world.ts), `Atomics` and
 * `SharedArrayBuffer`, which Node removes while a snapshot is made (intrinsics.ts). Nothing here
 * loads `node:worker_threads`: a snapshot made with it loaded starts worker threads whose
 * `process.cwd()` throws (Node 20), so the global `MessagePort` and `MessageChannel` stand in
 * for it, and the thread tier's link (thread-link.ts) is main.ts's alone.
 */
// First, as in main.ts: a snapshot is made under the helper's start flags (start-flags.ts).
import './start-flags.js'
import { closeSync } from 'node:fs'
import { startupSnapshot } from 'node:v8'
import { SNAPSHOT_FD } from '../protocol/frames.js'
import { startEnvironment } from './environment.js'
import { helperProcessLink } from './helper-process.js'

/* eslint-disable hostile-realm/captured-builtins -- runs as the process starts, before any program */
startupSnapshot.setDeserializeMainFunction(() => {
  // Node has read the snapshot: no program may hold its descriptor, the one way to the file.
  closeSync(SNAPSHOT_FD)
  // Nor name it: a program's `fork()` passes execArgv on, and its child would read the
  // descriptor 6 it has instead.
  const flags = process.execArgv
  const at = flags.indexOf('--snapshot-blob')
  if (at !== -1) flags.splice(at, 2)
  startEnvironment(helperProcessLink)
})
/* eslint-enable hostile-realm/captured-builtins */
