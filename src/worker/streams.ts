/**
 * `process.stdout` and `process.stderr` as a program sees them. Every way of writing to them
 * (`write` and `end` in all their forms, Node's Writable machinery called on the streams, the
 * worker stream class's own `_writev`) lands in the run's output, never on the host's stdio.
 * Chunks are converted as Node converts them: a string with the encoding given, a TypedArray or
 * DataView as its bytes, anything else refused with Node's error codes. Bytes are decoded by one
 * streaming UTF-8 decoder per stream, so a character split across chunks (as piping a child's
 * output produces) is decoded once; what a decoder still holds is flushed when the run settles.
 *
 * The streams never end: they belong to the environment, whose next run must still print, so
 * `end` writes its chunk and calls back but leaves the stream open.
 */
import { types } from 'node:util'
import {
  TypeErrorOf, Uint8ArrayOf, dataProperty, defineProperty, freeze, getOwnPropertyDescriptor, getPrototypeOf, realmProcess, schedule,
  uncurryThis, withCode,
} from './intrinsics.js'

export interface TextSink {
  text(text: string): void
}

type Callback = (error?: Error | null) => void
type Write = (chunk: unknown, encoding?: unknown, callback?: unknown) => boolean

/** One stream's writer: `write(chunk, encoding)` semantics plus its own decoder state. */
export interface StreamWriter {
  write: Write
}

const bufferFrom = Buffer.from as (value: string, encoding: string) => Buffer
const isEncoding = Buffer.isEncoding
const isView = ArrayBuffer.isView
const isDataView = types.isDataView
const TextDecoderOf = TextDecoder
const decode = uncurryThis(TextDecoder.prototype.decode)
const typedArrayPrototype = getPrototypeOf(Uint8Array.prototype) as object
const getter = (prototype: object, name: string) => uncurryThis(getOwnPropertyDescriptor(prototype, name)!.get as (this: unknown) => unknown)
const viewFields = {
  typed: [getter(typedArrayPrototype, 'buffer'), getter(typedArrayPrototype, 'byteOffset'), getter(typedArrayPrototype, 'byteLength')],
  data: [getter(DataView.prototype, 'buffer'), getter(DataView.prototype, 'byteOffset'), getter(DataView.prototype, 'byteLength')],
}
const STREAMING = freeze({ stream: true })

/** A TypeError carrying Node's error code, as the stream would throw it. */
function nodeTypeError(code: string, message: string): TypeError {
  return withCode(new TypeErrorOf(message), code)
}

/** The bytes of a TypedArray or DataView, read through the intrinsic getters. */
function viewBytes(view: ArrayBufferView): Uint8Array {
  // Indexed, not destructured: a program may have replaced the array iterator.
  const fields = isDataView(view) ? viewFields.data : viewFields.typed
  return new Uint8ArrayOf(fields[0]!(view) as ArrayBuffer, fields[1]!(view) as number, fields[2]!(view) as number)
}

function describeType(chunk: unknown): string {
  if (chunk === undefined) return 'undefined'
  if (typeof chunk === 'object') return 'an instance of Object'
  return typeof chunk === 'function' ? 'function' : `type ${typeof chunk}`
}

class CapturedStream implements StreamWriter {
  private readonly _decoder = new TextDecoderOf('utf-8', { ignoreBOM: true })
  /** Bytes went into the decoder since it was last flushed: it may hold part of a character. */
  private _pending = false

  constructor(private readonly _sink: TextSink) {}

  /** Validates and captures one chunk, as `Writable#write` would before writing it. */
  capture(chunk: unknown, encoding: unknown): void {
    const named = encoding ? encoding : 'utf8' // as in Node, a falsy encoding means the default
    if (named !== 'utf8' && named !== 'buffer' && !isEncoding(named as string)) {
      throw nodeTypeError('ERR_UNKNOWN_ENCODING', `Unknown encoding: ${typeof named === 'string' ? named : typeof named}`)
    }
    if (typeof chunk === 'string') {
      const utf8 = named === 'utf8' || named === 'utf-8' || named === 'buffer'
      // A string is whole characters: it passes as is unless a partial character waits before it.
      if (utf8 && !this._pending) return this._sink.text(chunk)
      return this._bytes(bufferFrom(chunk, utf8 ? 'utf8' : (named as string)))
    }
    if (chunk === null) throw nodeTypeError('ERR_STREAM_NULL_VALUES', 'May not write null values to stream')
    if (isView(chunk)) return this._bytes(viewBytes(chunk))
    throw nodeTypeError(
      'ERR_INVALID_ARG_TYPE',
      `The "chunk" argument must be of type string or an instance of Buffer, TypedArray, or DataView. Received ${describeType(chunk)}`,
    )
  }

  /** Emits whatever the decoder still holds (an incomplete character becomes U+FFFD). */
  flush(): void {
    if (!this._pending) return
    this._pending = false
    this._sink.text(decode(this._decoder))
  }

  /** Drops whatever the decoder holds: bytes written between runs belong to no run. */
  reset(): void {
    if (!this._pending) return
    this._pending = false
    decode(this._decoder)
  }

  readonly write: Write = (chunk, encoding, callback) => {
    const done = typeof encoding === 'function' ? encoding : callback
    this.capture(chunk, typeof encoding === 'function' ? undefined : encoding)
    if (typeof done === 'function') schedule(() => (done as Callback)(null))
    return true
  }

  private _bytes(bytes: Uint8Array): void {
    this._pending = true
    this._sink.text(decode(this._decoder, bytes, STREAMING))
  }
}

let captured: { stdout: CapturedStream; stderr: CapturedStream } | undefined

/**
 * Redirects `process.stdout` and `process.stderr` into `sink`; returns their writers (the
 * program's `console` writes through them, so it shares each stream's decoder and order).
 */
export function captureProcessStreams(sink: TextSink): { stdout: StreamWriter; stderr: StreamWriter } {
  const streams = { stdout: new CapturedStream(sink), stderr: new CapturedStream(sink) }
  captured = streams
  const real = { stdout: realmProcess.stdout, stderr: realmProcess.stderr }
  const captureOf = (stream: unknown) => (stream === real.stdout ? streams.stdout : stream === real.stderr ? streams.stderr : undefined)
  // What Node's Writable machinery calls to write (Writable.prototype.write/end invoked on the
  // streams directly); on the worker stream class they post to the host's stdio.
  function _write(this: unknown, chunk: unknown, encoding: unknown, callback: Callback): void {
    captureOf(this)?.capture(chunk, encoding)
    callback(null)
  }
  function _writev(this: unknown, chunks: Array<{ chunk: unknown; encoding: unknown }>, callback: Callback): void {
    const stream = captureOf(this)
    // Indexed: a program may have replaced the array iterator.
    for (let index = 0; index < chunks.length; index++) stream?.capture(chunks[index]!.chunk, chunks[index]!.encoding)
    callback(null)
  }
  const method = (value: unknown) => dataProperty(value, false, true, true)
  const prototype = getPrototypeOf(real.stdout) as object
  defineProperty(prototype, '_write', method(_write))
  defineProperty(prototype, '_writev', method(_writev))
  const redirect = (stream: NodeJS.WriteStream, writer: CapturedStream) => {
    defineProperty(stream, 'write', method(writer.write))
    defineProperty(stream, 'end', method(function end(chunk?: unknown, encoding?: unknown, callback?: unknown) {
      let done = callback
      if (typeof chunk === 'function') {
        done = chunk
        chunk = undefined
      } else if (typeof encoding === 'function') {
        done = encoding
        encoding = undefined
      }
      if (chunk !== undefined && chunk !== null) writer.capture(chunk, encoding)
      if (typeof done === 'function') schedule(() => (done as Callback)())
      return stream
    }))
  }
  redirect(real.stdout, streams.stdout)
  redirect(real.stderr, streams.stderr)
  return streams
}

/** Emits what the stream decoders still hold into the current run (called as it settles). */
export function flushProcessStreams(): void {
  captured?.stdout.flush()
  captured?.stderr.flush()
}

/** Forgets partial characters written since the last run settled. */
export function resetProcessStreams(): void {
  captured?.stdout.reset()
  captured?.stderr.reset()
}
