/**
 * The Node command line of a process tier's helper. The helper is the environment's bundle itself
 * (dist/worker.cjs, src/worker/helper-process.ts), run as a process: the program's realm is its
 * main thread, with no worker thread of its own, so what a worker's `resourceLimits` gave is
 * given here as V8 flags, which the program cannot change once the process runs.
 */
import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { type HelperOptions, SNAPSHOT_FD } from '../../../protocol/frames.js'

const ENVIRONMENT_FILE = fileURLToPath(new URL('./worker.cjs', import.meta.url))

/** A worker's stack (Node's default `resourceLimits.stackSizeMb`, 4) less the margin Node keeps. */
const WORKER_STACK_KB = 4 * 1024 - 192
/** What V8 must leave of the main thread's stack for Node's native frames beside its own. */
const NATIVE_STACK_MARGIN_KB = 512

/**
 * The stack V8 may use on the helper's main thread: a worker's, so a program recurses as deep
 * on every tier, within the stack the kernel grants the main thread (RLIMIT_STACK, which the
 * helper inherits from the host). Past that limit V8 would overflow the real stack and crash
 * where it should throw a RangeError.
 */
function stackSizeKb(): number {
  let limitKb = Infinity
  try {
    const line = /^Max stack size\s+(\S+)/m.exec(readFileSync('/proc/self/limits', 'utf8'))
    if (line && line[1] !== 'unlimited') limitKb = Number(line[1]) / 1024
  } catch {
    limitKb = 8 * 1024 // Linux's usual default
  }
  return Math.max(0, Math.floor(Math.min(WORKER_STACK_KB, limitKb - NATIVE_STACK_MARGIN_KB)))
}

let stackKb: number | undefined

/** The V8 flags of a helper whose heap is capped at `maxOldGenerationSizeMb`. */
export function helperFlags(maxOldGenerationSizeMb: number): string[] {
  stackKb ??= stackSizeKb()
  return [`--max-old-space-size=${maxOldGenerationSizeMb}`, ...(stackKb > 0 ? [`--stack-size=${stackKb}`] : [])]
}

/**
 * `node` and its arguments for a helper started with `options`; from the startup snapshot given
 * as SNAPSHOT_FD (helper-snapshot.ts) when `fromSnapshot`. The bundle's path stays on the command
 * line either way, so the helper finds its options in the same place.
 */
export function helperCommand(options: HelperOptions, fromSnapshot = false): string[] {
  return [
    process.execPath,
    '--no-warnings',
    ...helperFlags(options.maxOldGenerationSizeMb),
    ...(fromSnapshot ? ['--snapshot-blob', `/proc/self/fd/${SNAPSHOT_FD}`] : []),
    ENVIRONMENT_FILE,
    JSON.stringify(options),
  ]
}
