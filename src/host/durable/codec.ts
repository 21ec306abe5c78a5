/**
 * Sealing a durable record into its token and opening a token back into its record: the work
 * that grows with a token (writing and parsing the record's JSON, deflate and inflate, the HMAC,
 * base64). It runs in the durable worker thread (`durable-worker.ts`), never on the host's: a
 * 30 MB token holds a thread for hundreds of milliseconds. Values that may nest deeper than
 * structured cloning allows (the held call's payload, a decision's value) cross between the
 * threads as JSON text, written without recursion (`journal-text.ts`).
 */
import { createHmac, timingSafeEqual } from 'node:crypto'
import { deflateRawSync, inflateRawSync } from 'node:zlib'
import type { PtcHoldDecision, PtcJsonValue } from '../../seam/types.js'
import { type DurableRecord, DurableTokenError, type JournalEntry, type OpenedRecord, TOKEN_PREFIX, TOKEN_VERSION, recordProblem } from './record.js'
import { jsonText } from './journal-text.js'

/** A journal entry as it crosses to or from the worker: its decisions as JSON text. */
export type EntryInTransit = Omit<JournalEntry, 'decisions'> & { decisions?: string }

/** What sealing needs: the record, its entries' decisions and its held payload as JSON text. */
export interface SealRequest {
  facts: Omit<DurableRecord, 'calls' | 'pause'>
  calls: EntryInTransit[]
  pauseTool: string
  payloadText: string
  key: Buffer
}

/** An opened record as it crosses back from the worker. */
export type OpenedInTransit = Omit<OpenedRecord, 'calls'> & { calls: EntryInTransit[] }

/** `entry` with its decisions as JSON text, so it can be structured-cloned at any depth. */
export function entryInTransit(entry: JournalEntry): EntryInTransit {
  const { decisions, ...rest } = entry
  return decisions === undefined ? rest : { ...rest, decisions: jsonText(decisions as unknown as PtcJsonValue) }
}

/** The journal entry `entry` carries (its decisions parsed back: `JSON.parse` does not recurse). */
export function entryFromTransit(entry: EntryInTransit): JournalEntry {
  const { decisions, ...rest } = entry
  return decisions === undefined ? rest : { ...rest, decisions: JSON.parse(decisions) as PtcHoldDecision[] }
}

/** The signed token of the record `request` describes. */
export function sealRecord({ facts, calls, pauseTool, payloadText, key }: SealRequest): string {
  const parts = [`${JSON.stringify(facts).slice(0, -1)},"calls":[`]
  for (const [index, { decisions, ...rest }] of calls.entries()) {
    const text = JSON.stringify(rest)
    parts.push(`${index > 0 ? ',' : ''}${decisions === undefined ? text : `${text.slice(0, -1)},"decisions":${decisions}}`}`)
  }
  parts.push(`],"pause":{"tool":${JSON.stringify(pauseTool)},"payload":${payloadText}}}`)
  const signed = `${TOKEN_PREFIX}${TOKEN_VERSION}.${deflateRawSync(Buffer.from(parts.join(''), 'utf8')).toString('base64url')}`
  return `${signed}.${createHmac('sha256', key).update(signed).digest('base64url')}`
}

/** Characters of a token's MAC: HMAC-SHA256 in base64url. */
const MAC_CHARS = 43

/**
 * The longest token a record of at most `maxRecordBytes` seals into: zlib's conservative bound
 * of its deflate (incompressible bytes grow a little), in base64url, between the prefix and the MAC.
 */
export function tokenBound(maxRecordBytes: number): number {
  const deflated = maxRecordBytes + Math.ceil(maxRecordBytes / 8) + Math.ceil(maxRecordBytes / 64) + 5
  return `${TOKEN_PREFIX}${TOKEN_VERSION}..`.length + Math.ceil((deflated * 4) / 3) + MAC_CHARS
}

/**
 * The record of `token`, which one of `keys` signed, inflating to at most `maxRecordBytes`
 * (`maxJournalBytes` names where that bound comes from), or a `DurableTokenError` saying what is wrong.
 */
export function openRecord(token: string, keys: readonly Buffer[], maxRecordBytes: number, maxJournalBytes: number): OpenedInTransit {
  const parts = token.split('.')
  // A token is base64url between its dots: anything else is refused before the MAC reads it.
  if (parts.length !== 4 || `${parts[0]}.` !== TOKEN_PREFIX || !parts.slice(1).every((part) => /^[\w-]*$/.test(part))) {
    throw new DurableTokenError(`the durable token is malformed: it must read ${TOKEN_PREFIX}<version>.<payload>.<signature> in base64url characters (truncated or not a token)`)
  }
  const [, version, payload, signature] = parts as [string, string, string, string]
  const given = Buffer.from(signature, 'base64url')
  const signed = `${TOKEN_PREFIX}${version}.${payload}`
  // Every key is tried, so how long the check takes does not say which key signed.
  let genuine = false
  for (const key of keys) {
    const expected = createHmac('sha256', key).update(signed).digest()
    if (given.length === expected.length && timingSafeEqual(given, expected)) genuine = true
  }
  if (!genuine) {
    throw new DurableTokenError('the durable token was refused: its signature does not match (it was altered, truncated, or signed with another durableKey)')
  }
  if (version !== String(TOKEN_VERSION)) {
    throw new DurableTokenError(`the durable token has version ${JSON.stringify(version)}; this runtime reads version ${TOKEN_VERSION}`)
  }
  let text: string
  try {
    text = inflateRawSync(Buffer.from(payload, 'base64url'), { maxOutputLength: maxRecordBytes }).toString('utf8')
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE') {
      throw new DurableTokenError(
        `the durable token's record inflates to more than ${maxRecordBytes} bytes, over what this runtime's maxJournalBytes (${maxJournalBytes}) lets a token hold: it was sealed by a runtime with a larger maxJournalBytes; resume it with one as large`,
      )
    }
    throw new DurableTokenError(`the durable token's record does not decode: ${(error as Error).message}`)
  }
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch (error) {
    throw new DurableTokenError(`the durable token's record does not decode: ${(error as Error).message}`)
  }
  const problem = recordProblem(parsed)
  if (problem) throw new DurableTokenError(`the durable token's record is invalid: ${problem}`)
  const { pause: _checked, calls, ...rest } = parsed as DurableRecord
  return { ...rest, calls: calls.map(entryInTransit) }
}
