/**
 * Output capture: the whole `console` API (Node's own Console class, so rendering is exactly
 * Node's) and `process.stdout`/`process.stderr` writes, all feeding one sink in emission order.
 */
import { Console } from 'node:console'
import { StringOf, Uint8ArrayOf, decodeUtf8, defineProperty, realmProcess, schedule } from './intrinsics.js'

export interface TextSink {
  text(text: string): void
}

function chunkText(chunk: unknown): string {
  if (typeof chunk === 'string') return chunk
  if (chunk instanceof Uint8ArrayOf) return decodeUtf8(chunk)
  return StringOf(chunk)
}

/** A `write` compatible with Writable#write that lands in the sink. */
function writerFor(sink: TextSink) {
  return function write(chunk: unknown, encoding?: unknown, callback?: unknown): boolean {
    sink.text(chunkText(chunk))
    const done = typeof encoding === 'function' ? encoding : callback
    if (typeof done === 'function') schedule(() => (done as (error: null) => void)(null))
    return true
  }
}

/** Creates the program's `console` and redirects both process streams into the sink. */
export function createConsole(sink: TextSink): Console {
  const stream = { write: writerFor(sink) } as unknown as NodeJS.WritableStream
  defineProperty(realmProcess.stdout, 'write', { value: writerFor(sink), writable: true, configurable: true })
  defineProperty(realmProcess.stderr, 'write', { value: writerFor(sink), writable: true, configurable: true })
  // ignoreErrors: false keeps Console from attaching listeners our plain stream does not have.
  return new Console({ stdout: stream, stderr: stream, colorMode: false, ignoreErrors: false })
}
