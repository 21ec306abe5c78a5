/**
 * Parsing of worker traffic. A program can reach its own MessagePorts, so every inbound
 * message is hostile input: it is checked field by field and rebuilt, and anything that does
 * not fit the protocol becomes a violation string (the run then fails with `protocol`).
 */
import { isRecord } from '../../json/index.js'
import type { PtcJsonValue } from '../../seam/types.js'
import { type CallMessage, type DrawsMessage, MAX_DRAWS, MAX_DRAW_BYTES, type OutputItem, type WorkerFailureKind, type WorkerMessage } from '../../protocol/messages.js'

const FAILURE_KINDS: ReadonlySet<string> = new Set<WorkerFailureKind>(['exception', 'invalid-output', 'output-limit'])
const { isArray } = Array

const isId = (value: unknown): value is number => Number.isSafeInteger(value) && (value as number) > 0

function parseItems(raw: unknown): OutputItem[] | undefined {
  if (!isArray(raw)) return undefined
  const items: OutputItem[] = []
  for (const item of raw) {
    if (typeof item === 'string') items.push(item)
    else if (isRecord(item) && typeof item.attachmentId === 'string') items.push({ attachmentId: item.attachmentId })
    else return undefined
  }
  return items
}

function parseCall(raw: unknown, run: number): CallMessage | undefined {
  if (!isRecord(raw) || raw.type !== 'call' || raw.run !== run) return undefined
  const { id, global, name, args } = raw
  if (!isId(id) || typeof global !== 'string' || typeof name !== 'string') return undefined
  return args === undefined ? { type: 'call', run, id, global, name } : { type: 'call', run, id, global, name, args: args as PtcJsonValue }
}

const isHex = (value: unknown) => typeof value === 'string' && value.length <= 2 * MAX_DRAW_BYTES && /^(?:[0-9a-f]{2})*$/.test(value)

/** A durable run's report of values its clocks and randomness answered, each list within `MAX_DRAWS`. */
function parseDraws(raw: Record<string, unknown>, run: number): DrawsMessage | undefined {
  const { clock, random, bytes } = raw
  const list = (value: unknown, item: (entry: unknown) => boolean) => isArray(value) && value.length <= MAX_DRAWS && value.every(item)
  if (!list(clock, Number.isFinite) || !list(random, Number.isFinite) || !list(bytes, isHex)) return undefined
  const draws: DrawsMessage = { type: 'draws', run, clock: [...(clock as number[])], random: [...(random as number[])], bytes: [...(bytes as string[])] }
  return raw.overflow === true ? { ...draws, overflow: true } : draws
}

/**
 * A hostile value named in a violation. Never `String(value)`: an object whose `toString` is not
 * a function makes that throw, inside the host's channel reader.
 */
function describe(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value.slice(0, 40))
  if (typeof value === 'number' || typeof value === 'boolean' || value === null || value === undefined) return String(value)
  return `a value of type ${typeof value}`
}

/** A subprocess report of any run (one arriving between runs still counts). */
export function isSpawnReport(raw: unknown): raw is { type: 'spawned'; pid: number } {
  return isRecord(raw) && raw.type === 'spawned' && isId(raw.pid)
}

/** Rebuilds a message from the run numbered `run`, or returns why it violates the protocol. */
export function parseWorkerMessage(raw: unknown, run: number): WorkerMessage | string {
  if (!isRecord(raw)) return 'a message that is not an object'
  const { type } = raw
  if (raw.run !== run) return `a message for another run (${describe(raw.run)})`
  switch (type) {
    case 'output': {
      const items = parseItems(raw.items)
      return items ? { type, run, items } : 'a malformed output message'
    }
    case 'call':
      return parseCall(raw, run) ?? 'a malformed binding call'
    case 'calls': {
      if (!isArray(raw.calls) || raw.calls.length === 0) return 'a malformed batch of binding calls'
      const calls: CallMessage[] = []
      for (const item of raw.calls) {
        const call = parseCall(item, run)
        if (!call) return 'a malformed binding call'
        calls.push(call)
      }
      return { type, run, calls }
    }
    case 'done':
      // Values are lossless JSON by the time a message is parsed: read so (json-lines.ts).
      return 'value' in raw ? { type, run, value: raw.value as PtcJsonValue } : { type, run }
    case 'failed': {
      const { kind, message } = raw
      if (typeof kind !== 'string' || !FAILURE_KINDS.has(kind) || typeof message !== 'string') return 'a malformed failure'
      const failure = { type, run, kind: kind as WorkerFailureKind, message } as const
      return {
        ...failure,
        ...(raw.initializer === true ? { initializer: true } : {}),
        ...(raw.unusable === true ? { unusable: true } : {}),
      }
    }
    case 'started':
      return { type, run }
    case 'draws':
      return parseDraws(raw, run) ?? 'a malformed report of recorded values'
    case 'spawned':
      return isId(raw.pid) ? { type, run, pid: raw.pid } : 'a malformed subprocess report'
    default:
      return `a message of unknown type ${describe(type)}`
  }
}
