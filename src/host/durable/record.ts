/**
 * Durable pause tokens: what a run paused with `pause: 'durable'` hands its caller instead of a
 * live environment, and what `resume(token, decision, { bindings })` replays in a fresh one. A
 * token is the string `ptc-durable.<version>.<payload>.<mac>`: the payload is the run's record
 * (`DurableRecord`) as JSON, deflated and base64url-encoded; the MAC is HMAC-SHA256, under the
 * deployment's first `durableKey`, of everything before it. A token is checked (prefix, MAC in
 * constant time under each of the deployment's keys, version, then every field) before anything
 * of it is used, so a forged, altered, truncated or foreign token runs nothing. The record is
 * signed, not encrypted: the program, its call arguments and the tools' results are readable by
 * whoever holds the token. Sealing and opening run in a worker thread (`durable-thread.ts`,
 * `durable-codec.ts`); this file holds the record's shape, the keys and the record's checks.
 */
import { isRecord } from '../../json/index.js'
import { DURABLE_TOKEN_PREFIX, PROGRAM_FORMATS, PROGRAM_LANGUAGES } from '../../seam/types.js'
import type { PtcCallOutcome, PtcHoldDecision, PtcJsonValue, PtcProgramFormat, PtcProgramLanguage } from '../../seam/types.js'

/** What every token starts with; a live hold id (`hold-…`) never does. */
export const TOKEN_PREFIX = DURABLE_TOKEN_PREFIX
/** The token format this runtime writes and reads. */
export const TOKEN_VERSION = 2
/** Bytes a `durableKey` must have at least (the HMAC-SHA256 block of security it keys). */
export const MIN_KEY_BYTES = 32

/** How the program saw a recorded call end: the reply it got, its value as wire tokens. */
export type RecordedReply =
  | { ok: true; value: unknown[]; resultBytes: number }
  | { ok: false; message: string; outcome: Exclude<PtcCallOutcome, 'ok' | 'aborted'> }

/** A recorded reply as the journal keeps it: a value as the JSON text of its wire tokens. */
export type StoredReply =
  | { ok: true; value: string; resultBytes: number }
  | { ok: false; message: string; outcome: Exclude<PtcCallOutcome, 'ok' | 'aborted'> }

/** One binding call of the recorded run, by call number (the first call is entry 0). */
export interface JournalEntry {
  /** `global.member`. */
  tool: string
  /** The JSON text of the call's argument as the program passed it; absent when none. */
  args?: string
  /** The reply the program got; absent for a call still in flight when the run paused. */
  reply?: StoredReply
  /** Decisions given to this call's holds, in order (a call in flight: the held one). */
  decisions?: PtcHoldDecision[]
}

/** The facts of a run a replay needs again, besides its bindings. */
export interface DurableFacts {
  program: string
  language: PtcProgramLanguage
  format: PtcProgramFormat
  /** The run's cwd; null: the resuming runtime's default. */
  cwd: string | null
  timeoutMs: number | null
  maxCalls: number
  discardCompletion: boolean
}

/** Everything a durable resume needs besides the bindings (and the sandbox policy). */
export interface DurableRecord extends DurableFacts {
  /** The token's own id, random: what `durableStore` claims, so it resumes at most once. */
  id: string
  /** When the token was sealed, in ms since the epoch (`durableTokenLifetimeMs` counts from it). */
  issuedAt: number
  /** The calls of the run, in call order. */
  calls: JournalEntry[]
  /** The call number (from 1) of the held call: its entry has no reply. */
  held: number
  /** The held call as the paused result showed it (its argument is its entry's). */
  pause: { tool: string; payload: PtcJsonValue }
  /** What the program's clocks and randomness answered, one list per source (`DrawValues`). */
  clock: number[]
  random: number[]
  bytes: string[]
}

function keyBytes(key: unknown, field: string): Buffer {
  const bytes = typeof key === 'string' ? Buffer.from(key, 'utf8') : Buffer.isBuffer(key) ? key : undefined
  if (bytes === undefined) throw new TypeError(`${field} must be a string or a Buffer, got ${key === null ? 'null' : typeof key}`)
  if (bytes.length < MIN_KEY_BYTES) {
    throw new TypeError(`${field} must have at least ${MIN_KEY_BYTES} bytes (it keys the HMAC-SHA256 of durable tokens), got ${bytes.length}`)
  }
  return Buffer.from(bytes) // a copy: the deployer's buffer may change later
}

/**
 * The deployment's keys as bytes, the signing key first, or a throw naming `config.durableKey`
 * and its rule. A list rotates keys: tokens are signed with its first and verified with any.
 */
export function durableKeys(key: unknown): Buffer[] {
  if (!Array.isArray(key)) return [keyBytes(key, 'config.durableKey')]
  if (key.length === 0) throw new TypeError('config.durableKey must list at least one key (the first signs; every one verifies)')
  return key.map((item, index) => keyBytes(item, `config.durableKey[${index}]`))
}

/** Whether `id` is a durable token (by its prefix) rather than a live hold id. */
export function isDurableToken(id: string): boolean {
  return id.startsWith(TOKEN_PREFIX)
}

/** A token that cannot be resumed; `resume` rejects with it before anything runs. */
export class DurableTokenError extends Error {
  override name = 'DurableTokenError'
}

const OUTCOMES: ReadonlySet<unknown> = new Set(['error', 'timeout', 'refused'])
const isNumber = (value: unknown) => typeof value === 'number' && Number.isFinite(value)
const isCount = (value: unknown) => Number.isSafeInteger(value) && (value as number) > 0

function decisionProblem(decision: unknown): string | undefined {
  if (!isRecord(decision)) return 'not an object'
  if (decision.approve === true) return undefined
  if (decision.approve !== false) return 'approve is not a boolean'
  return decision.reason === undefined || typeof decision.reason === 'string' ? undefined : 'reason is not a string'
}

function entryProblem(entry: unknown, index: number): string | undefined {
  const at = `calls[${index}]`
  if (!isRecord(entry) || typeof entry.tool !== 'string') return `${at}.tool must be a string`
  const { args, reply, decisions } = entry
  if (args !== undefined && typeof args !== 'string') return `${at}.args must be JSON text`
  if (reply !== undefined) {
    if (!isRecord(reply)) return `${at}.reply must be an object`
    if (reply.ok === true && (typeof reply.value !== 'string' || !isNumber(reply.resultBytes))) return `${at}.reply must carry value tokens and resultBytes`
    if (reply.ok === false && (typeof reply.message !== 'string' || !OUTCOMES.has(reply.outcome))) return `${at}.reply must carry a message and an outcome`
    if (reply.ok !== true && reply.ok !== false) return `${at}.reply.ok must be a boolean`
  }
  if (decisions !== undefined) {
    if (!Array.isArray(decisions)) return `${at}.decisions must be an array`
    for (const [i, decision] of decisions.entries()) {
      const problem = decisionProblem(decision)
      if (problem) return `${at}.decisions[${i}]: ${problem}`
    }
  }
  return undefined
}

/** Why `value` is not a `DurableRecord`, or undefined. */
export function recordProblem(value: unknown): string | undefined {
  if (!isRecord(value)) return 'not an object'
  const { id, issuedAt, program, language, format, cwd, timeoutMs, maxCalls, discardCompletion, calls, held, pause, clock, random, bytes } = value
  if (typeof id !== 'string' || id === '') return 'id must be a non-empty string'
  if (!isNumber(issuedAt)) return 'issuedAt must be a number'
  if (typeof program !== 'string') return 'program must be a string'
  if (!(PROGRAM_LANGUAGES as readonly unknown[]).includes(language)) return 'language is unknown'
  if (!(PROGRAM_FORMATS as readonly unknown[]).includes(format)) return 'format is unknown'
  if (cwd !== null && typeof cwd !== 'string') return 'cwd must be a string or null'
  if (timeoutMs !== null && !(isNumber(timeoutMs) && (timeoutMs as number) > 0)) return 'timeoutMs must be a positive number or null'
  if (!isCount(maxCalls)) return 'maxCalls must be a positive integer'
  if (typeof discardCompletion !== 'boolean') return 'discardCompletion must be a boolean'
  if (!Array.isArray(calls)) return 'calls must be an array'
  for (const [index, entry] of calls.entries()) {
    const problem = entryProblem(entry, index)
    if (problem) return problem
  }
  if (!isCount(held) || (held as number) > calls.length || (calls[(held as number) - 1] as JournalEntry).reply !== undefined) {
    return 'held must name a call of the record that has no reply'
  }
  if (!isRecord(pause) || typeof pause.tool !== 'string' || !('payload' in pause)) return 'pause must name the held call'
  if (!Array.isArray(clock) || !clock.every(isNumber)) return 'clock must be a list of numbers'
  if (!Array.isArray(random) || !random.every(isNumber)) return 'random must be a list of numbers'
  if (!Array.isArray(bytes) || !bytes.every((item) => typeof item === 'string' && /^(?:[0-9a-f]{2})*$/.test(item))) return 'bytes must be a list of hex strings'
  return undefined
}

/** A record as `resume` reads it: the held call's payload is checked when the token is opened, and not needed after. */
export type OpenedRecord = Omit<DurableRecord, 'pause'>
