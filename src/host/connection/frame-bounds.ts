/**
 * The bounds the host reads a program's side with (src/host/connection/json-lines.ts), on every tier: a
 * thread worker's messages, a helper's frames, a stream entry's lines. What may be large is
 * named by the budgets: a call's arguments (`maxPendingCallBytes`, the JSON bytes of the
 * arguments of calls in flight) and a completion and output (`maxOutputBytes`). Everything
 * else of a message is a few short fields, so a container anywhere the protocol has none ends
 * the line at its first byte, and a payload is refused as soon as it passes its budget, before
 * the host has built more of it.
 */
import type { JsonLinesLimits, JsonPath, JsonShape } from './json-lines.js'

/** The budgets a frame's bounds derive from (the runtime's configuration). */
export interface FrameBudget {
  maxOutputBytes: number
  maxPendingCallBytes: number
}

/**
 * How deeply a line's containers may nest. Lossless JSON has no depth limit of its own, and a
 * completion or arguments nested tens of thousands deep are legitimate (the corpus has them);
 * each level costs the reader one stack entry, and its bytes count against the budgets above.
 */
export const MAX_LINE_DEPTH = 1 << 20

/**
 * The longest message or frame a program's side may send while a run listens: output is capped
 * by maxOutputBytes (counted as JSON; escaping may double it in a frame) and call arguments by
 * maxPendingCallBytes; anything longer is over-budget traffic.
 */
export function frameBytes(budget: FrameBudget): number {
  return 2 * budget.maxOutputBytes + budget.maxPendingCallBytes + 1024 * 1024
}

/** The two budgets of `config`, for an environment's frames. */
export function frameBudget(config: FrameBudget): FrameBudget {
  return { maxOutputBytes: config.maxOutputBytes, maxPendingCallBytes: config.maxPendingCallBytes }
}

/**
 * The bytes a call's arguments (or a completion) took on the line they arrived in, by the value
 * the reader built: what `jsonByteLength` would count for what the worker wrote, without walking
 * a large value again on the host's thread.
 */
const payloadBytes = new WeakMap<object, number>()

/** The bytes `value` took on its line when it arrived as a bounded payload, if it did. */
export function arrivedBytes(value: unknown): number | undefined {
  return typeof value === 'object' && value !== null ? payloadBytes.get(value) : undefined
}

/** An attachment entry of output, `{ attachmentId }`: ids are short. */
const ATTACHMENT_BYTES = 1024

/** Where a worker message (its root at `path`'s start) may hold a container, and how large. */
function messageShape(budget: FrameBudget, path: JsonPath, kind: Container): number | false {
  const [field, index, inner] = path
  switch (path.length) {
    case 0:
      return kind === 'object' && Infinity
    case 1:
      if (field === 'args') return budget.maxPendingCallBytes
      if (field === 'value') return budget.maxOutputBytes
      return kind === 'array' && (field === 'items' || field === 'calls' || field === 'clock' || field === 'random' || field === 'bytes') && Infinity
    case 2:
      if (kind !== 'object' || typeof index !== 'number') return false
      return field === 'items' ? ATTACHMENT_BYTES : field === 'calls' && Infinity
    case 3:
      return field === 'calls' && inner === 'args' && budget.maxPendingCallBytes
    default:
      return false
  }
}

/** A helper frame: `{ type, message }`, the message in `message`. */
function frameShape(budget: FrameBudget, path: JsonPath, kind: Container): number | false {
  if (path.length === 0) return kind === 'object' && Infinity
  return path[0] === 'message' && messageShape(budget, path.slice(1), kind)
}

/** A stream entry's line: `[tag, …]`, a helper frame second (`['channel', frame]`). */
function entryShape(budget: FrameBudget, path: JsonPath, kind: Container): number | false {
  if (path.length === 0) return kind === 'array' && Infinity
  return path[0] === 1 && frameShape(budget, path.slice(1), kind)
}

type Container = 'object' | 'array'

const SHAPES: Record<'message' | 'frame' | 'entry', (budget: FrameBudget, path: JsonPath, kind: Container) => number | false> = {
  message: messageShape,
  frame: frameShape,
  entry: entryShape,
}

/**
 * The bounds of one kind of line: a thread worker's `message`, a helper's `frame`, a stream
 * entry's `entry` line. `maxLineBytes` defaults to `frameBytes(budget)`.
 */
export function lineLimits(kind: keyof typeof SHAPES, budget: FrameBudget, maxLineBytes = frameBytes(budget)): JsonLinesLimits {
  const shape = SHAPES[kind]
  const bound: JsonShape = (path, container) => shape(budget, path, container)
  return { maxLineBytes, maxDepth: MAX_LINE_DEPTH, shape: bound, measured: (container, bytes) => payloadBytes.set(container, bytes) }
}
