/**
 * The bounds the host reads a program's side with (src/host/connection/json-lines.ts), on every tier: a
 * thread worker's messages, a helper's frames, a stream entry's lines. What may be large is
 * named by the budgets: a call's arguments (`maxPendingCallBytes`, the JSON bytes of the
 * arguments of calls in flight) and a completion and output (`maxOutputBytes`). Everything
 * else of a message is a few short fields, so a container anywhere the protocol has none ends
 * the line at its first byte, and a payload is refused as soon as it passes its budget, before
 * the host has built more of it. The protocol's lists (a batch of calls, a report of recorded
 * values, the entries of output, a stream entry's line) are refused at their first element past
 * their count, which their bytes alone would not bound: a list of 20 000 000 zeros takes 40 MB
 * of a message. Its objects are refused at their first key past MAX_PROTOCOL_KEYS likewise, and
 * its program data at its first key past MAX_OBJECT_KEYS in one object or MAX_MESSAGE_KEYS in all,
 * and at its first value past MAX_MESSAGE_VALUES in all.
 */
import { KEY_BOUNDS_RULE, MAX_DRAW_BYTES, MAX_DRAWS, MAX_MESSAGE_KEYS, MAX_MESSAGE_VALUES, MAX_OBJECT_KEYS } from '../../protocol/messages.js'
import type { JsonLinesLimits, JsonShape } from './json-lines.js'

/** The budgets a frame's bounds derive from (the runtime's configuration). */
export interface FrameBudget {
  maxOutputBytes: number
  maxPendingCallBytes: number
  maxPendingCalls: number
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

/** The budgets of `config`, for an environment's frames. */
export function frameBudget(config: FrameBudget): FrameBudget {
  return { maxOutputBytes: config.maxOutputBytes, maxPendingCallBytes: config.maxPendingCallBytes, maxPendingCalls: config.maxPendingCalls }
}

/**
 * The values (lists, objects, strings, numbers, booleans, nulls) the arguments of one run's calls
 * in flight may hold in all, as many as one message may carry. Bytes alone do not bound what the
 * host holds for them: a value costs the host tens of bytes however short its JSON, so 16 MiB of
 * arguments nested a million deep held 450 MB, and a few runs of such calls ran the host out of
 * memory. At this bound and the default 16 MiB they hold at most about 200 MB of its heap
 * (measured, Node 20: a million short keys each holding `{}` and a million `{}` more, 203 MB; two
 * million `{}`, 141 MB; two million short strings, 74 MB), where counting lists and objects alone
 * let a call of two million `{}` and two million short strings hold 266 MB.
 */
export const MAX_PENDING_VALUES = MAX_MESSAGE_VALUES

/** Why a call was refused whose arguments would pass {@link MAX_PENDING_VALUES}. */
export function tooManyValuesMessage(label: string, values: number): string {
  return `${label} was not called: its arguments hold ${values} values, which would bring those of this run's calls in flight over ${MAX_PENDING_VALUES} (lists, objects, strings, numbers, booleans and nulls), the most the host holds for them; await calls before making more, or pass fewer values`
}

/**
 * Why a run failed with more binding calls in flight than `maxPendingCalls`: the host's one
 * message for it, whether the reader refused a batch or the run's dispatcher the call past it.
 */
export function tooManyPendingCallsMessage(maxPendingCalls: number): string {
  return `more than ${maxPendingCalls} binding calls are pending at once (maxPendingCalls)`
}

/** An attachment entry of output, `{ attachmentId }`: ids are short. */
const ATTACHMENT_BYTES = 1024

const open = (kinds: JsonShape['kinds'], more: Partial<JsonShape> = {}): JsonShape => ({ kinds, bytes: Infinity, ...more })

/** A string of the protocol at a place that holds no container: at most `bytes` of the line, quotes included. */
const text = (bytes: number, why: string): JsonShape => ({ kinds: 'none', bytes: Infinity, string: { bytes, why } })

/**
 * The longest recorded value of `crypto.getRandomValues` on a line: its bytes as lowercase hex
 * (two characters a byte) and quotes. The worker records at most MAX_DRAW_BYTES bytes in all.
 */
const DRAW_STRING_BYTES = 2 * MAX_DRAW_BYTES + 2

/**
 * A list of a durable run's recorded values: the worker records at most MAX_DRAWS of them, all
 * lists together, and at most MAX_DRAW_BYTES bytes of `crypto.getRandomValues` (one string each).
 */
const draws = (field: string): JsonShape =>
  open('array', {
    maxElements: { count: MAX_DRAWS, why: `"${field}" holds more than ${MAX_DRAWS} values, more than a durable run records (MAX_DRAWS)` },
    elements: text(DRAW_STRING_BYTES, `"${field}" holds a string of more than ${DRAW_STRING_BYTES} bytes, more than a durable run records (MAX_DRAW_BYTES)`),
  })

/**
 * The longest string of a helper frame itself (`exit`'s and `refused`'s `message`): the helper
 * cuts an exit's text at 2 000 characters, and a refusal names the run's cwd.
 */
export const FRAME_TEXT_BYTES = 64 * 1024

/**
 * The most keys an object of the protocol may hold (a frame, a message, a call of a batch): the
 * largest the protocol sends holds 6 (a call, a failure, a report of recorded values). Their
 * bytes alone would not bound them: a million distinct keys take 10 MB, and V8 builds such an
 * object in time that grows faster than its keys. Program data (arguments, a completion) has
 * bounds of its own (DATA_KEYS).
 */
export const MAX_PROTOCOL_KEYS = 16

/** An object of the protocol, `what`, bounded to MAX_PROTOCOL_KEYS. */
const fields = (what: string, more: Partial<JsonShape> = {}): JsonShape =>
  open('object', { maxKeys: { count: MAX_PROTOCOL_KEYS, why: `${what} holds more than ${MAX_PROTOCOL_KEYS} fields, more than any of the protocol (MAX_PROTOCOL_KEYS)` }, ...more })

/** The bound of a failure's message however small maxOutputBytes is: the worker's own (`output exceeded …`) fit. */
const MIN_FAILURE_BYTES = 64 * 1024

/** Where a worker message may hold a container, and how large. */
function messageShape(budget: FrameBudget): JsonShape {
  const args: JsonShape = { kinds: 'any', bytes: budget.maxPendingCallBytes, field: 'args' }
  // The worker sends an entry of output only while it fits what output leaves free
  // (src/worker/output.ts), at most maxOutputBytes as JSON on the line, and a failure's message
  // longer than that as output-limit's short one (src/worker/run.ts `fail`).
  const outputText = (what: string, bytes: number): { bytes: number; why: string } => ({
    bytes,
    why: `${what} is a string of more than ${bytes} bytes, more than output may hold (maxOutputBytes)`,
  })
  return fields('a message', {
    children: {
      args,
      value: { kinds: 'any', bytes: budget.maxOutputBytes, field: 'value' },
      message: { kinds: 'none', bytes: Infinity, string: outputText("a failure's message", Math.max(budget.maxOutputBytes, MIN_FAILURE_BYTES)) },
      // The worker sends each entry of output as it is written, one to a message.
      items: open('array', {
        maxElements: { count: 1, why: 'an output message holds more than one entry (the worker sends each in a message of its own)' },
        elements: { kinds: 'object', bytes: ATTACHMENT_BYTES, string: outputText('an entry of output', budget.maxOutputBytes) },
      }),
      // The worker batches the calls of one tick, however many. The host counts every call of a
      // batch as pending before it writes any reply, so a batch past maxPendingCalls fails the
      // run anyway (calls.ts): this bound refuses no batch the host would serve, and needs no
      // run's state (maxCalls remaining would, and calls past maxCalls are pending too).
      calls: open('array', {
        maxElements: { count: budget.maxPendingCalls, why: tooManyPendingCallsMessage(budget.maxPendingCalls) },
        elements: fields('a call of a batch', { children: { args } }),
      }),
      clock: draws('clock'),
      random: draws('random'),
      bytes: draws('bytes'),
    },
  })
}

/** A helper frame: `{ type, message }`, the message in `message`. */
function frameShape(budget: FrameBudget): JsonShape {
  const message: JsonShape = {
    ...messageShape(budget),
    string: { bytes: FRAME_TEXT_BYTES, why: `a frame's message is a string of more than ${FRAME_TEXT_BYTES} bytes, more than the helper writes` },
  }
  return fields('a frame', { children: { message } })
}

/** The most elements an entry line holds: `['ended', how, oomKilled]` (protocol/frames.ts `EntryLine`). */
const MAX_ENTRY_ELEMENTS = 3

/** Why an entry line past MAX_ENTRY_ELEMENTS was refused. */
export const ENTRY_ELEMENTS_WHY = `a stream entry line holds more than ${MAX_ENTRY_ELEMENTS} elements, more than any the entry writes`

/**
 * A stream entry's line: `[tag, …]`, a helper frame second (`['channel', frame]`). The entry
 * forwards a frame's text unparsed, so a frame that closes early pads the line with whatever
 * follows it: the count refuses that at the first element past it.
 */
function entryShape(budget: FrameBudget): JsonShape {
  return open('array', { maxElements: { count: MAX_ENTRY_ELEMENTS, why: ENTRY_ELEMENTS_WHY }, children: { 1: frameShape(budget) } })
}

/** The keys a message's program data may hold (the worker refuses a value past them first). */
const BROKE = {
  object: `an object of more than ${MAX_OBJECT_KEYS} keys`,
  keys: `more than ${MAX_MESSAGE_KEYS} keys in all, with the message's other program data`,
  values: `more than ${MAX_MESSAGE_VALUES} values in all, with the message's other program data`,
}

const DATA_KEYS: JsonLinesLimits['dataKeys'] = {
  perObject: MAX_OBJECT_KEYS,
  perLine: MAX_MESSAGE_KEYS,
  valuesPerLine: MAX_MESSAGE_VALUES,
  why: (field, broke) => `"${field}" holds ${BROKE[broke]}, and ${KEY_BOUNDS_RULE}`,
}

const SHAPES: Record<'message' | 'frame' | 'entry', (budget: FrameBudget) => JsonShape> = {
  message: messageShape,
  frame: frameShape,
  entry: entryShape,
}

/**
 * The bounds of one kind of line: a thread worker's `message`, a helper's `frame`, a stream
 * entry's `entry` line. `maxLineBytes` defaults to `frameBytes(budget)`.
 */
export function lineLimits(kind: keyof typeof SHAPES, budget: FrameBudget, maxLineBytes = frameBytes(budget)): JsonLinesLimits {
  return { maxLineBytes, maxDepth: MAX_LINE_DEPTH, shape: SHAPES[kind](budget), dataKeys: DATA_KEYS }
}

/**
 * The longest helper frame accepted while no run listens: only short notices (`exit`, `forged`)
 * come then, so a program left running between runs cannot make the host parse floods for nobody.
 */
export const IDLE_FRAME_BYTES = 64 * 1024

/** The bounds of a channel while a run listens (`busy`) and between runs (`idle`). */
export interface ChannelLimits {
  readonly busy: JsonLinesLimits
  readonly idle: JsonLinesLimits
}

/**
 * A channel's bounds of one kind, worked out once per tier (they depend on the configuration
 * only) and shared by its environments: a reader only reads them.
 */
export function channelLimits(kind: keyof typeof SHAPES, budget: FrameBudget, idleBytes: number, busyBytes = frameBytes(budget)): ChannelLimits {
  return { busy: lineLimits(kind, budget, busyBytes), idle: lineLimits(kind, budget, idleBytes) }
}
