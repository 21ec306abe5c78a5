/**
 * The program's `console`: Node's own Console class, so rendering is exactly Node's, writing
 * through the same captured streams as `process.stdout` and `process.stderr` (see streams.ts),
 * so console output and raw writes share one order and one decoder per stream.
 */
import { Console } from 'node:console'
import type { StreamWriter } from './streams.js'

// Captured as the module loads: a process restored from a startup snapshot (snapshot.ts) finds
// `Console` gone from `node:console`, which is the global console there.
const ConsoleOf = Console

/** Creates the program's `console` over the captured streams' writers. */
export function createConsole(streams: { stdout: StreamWriter; stderr: StreamWriter }): Console {
  const stdout = { write: streams.stdout.write } as unknown as NodeJS.WritableStream
  const stderr = { write: streams.stderr.write } as unknown as NodeJS.WritableStream
  // ignoreErrors: false keeps Console from attaching listeners our plain streams do not have.
  return new ConsoleOf({ stdout, stderr, colorMode: false, ignoreErrors: false })
}
