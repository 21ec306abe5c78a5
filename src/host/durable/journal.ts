/**
 * The journal of a durable run (`pause: 'durable'`): the run's binding calls and the values its
 * clocks and randomness answered, recorded while it runs, and sealed into a token when a call is
 * held. A resumed run starts from the token's journal: the session replays it, so the program,
 * run again from its start in a fresh environment, gets every recorded call's reply from the
 * journal (the tool does not run again) as long as it makes the same calls with the same
 * arguments, in order; the held call's host function runs again with the decision as its hold's
 * answer; and from there the run goes on live, recording, and may pause durably again. What it
 * keeps counts against `maxJournalBytes`, in the bytes the token's record gives it: the program,
 * each argument as its JSON text (`journal-text.ts`, written without recursion, so arguments of
 * any depth are kept, compared and sealed), each reply as the JSON of its flat wire tokens, each
 * decision, and a fixed allowance per call for the record's structure; a run whose journal
 * outgrows it fails at once. What the record holds besides (the recorded clock and random values,
 * its fixed fields) is bounded by `RECORD_OVERHEAD_BYTES`, so a token's record never inflates
 * past `recordBound(maxJournalBytes)`.
 */
import { randomUUID } from 'node:crypto'
import { MAX_DRAWS, MAX_DRAW_BYTES, type DrawValues, type DrawsMessage, type ReplyMessage } from '../../protocol/messages.js'
import type { PtcCallOutcome, PtcHoldDecision, PtcJsonValue } from '../../seam/types.js'
import { type DurableFacts, type JournalEntry, type OpenedRecord, type RecordedReply, type StoredReply } from './record.js'
import { type SealRequest, entryInTransit } from './codec.js'
import type { SessionPause } from '../run/holds.js'
import { jsonText, preview, textBytes } from './journal-text.js'

/** What the dispatcher does with a call: answer it from the journal, run it, or fail the run. */
export type JournalStep =
  | { kind: 'replay'; reply: RecordedReply }
  /** Run the host function; its first holds are answered with `decisions`, in order. */
  | { kind: 'live'; decisions: PtcHoldDecision[] }
  /** The run fails with an `exception` carrying `message` (a divergent replay, a full journal). */
  | { kind: 'fail'; message: string }

/** What the messages show of a call's argument: its JSON text, cut short. */
function shown(args: string | undefined): string {
  return `(${args === undefined ? '' : preview(args)})`
}

/** Bytes of `text` as the record holds it: a JSON string (a JSON text's quotes and backslashes doubled). */
function stringBytes(text: string): number {
  return textBytes(JSON.stringify(text))
}

/**
 * `stringBytes` of a JSON text, without copying it: such a text has no control characters, so
 * only its quotes and backslashes are escaped again (an argument may be megabytes).
 */
function jsonTextBytes(text: string): number {
  let escaped = 2
  for (const special of ['"', '\\']) {
    for (let at = text.indexOf(special); at !== -1; at = text.indexOf(special, at + 1)) escaped++
  }
  return textBytes(text) + escaped
}

/** The record's bytes of one recorded reply. */
function replyBytes(reply: StoredReply): number {
  return reply.ok ? jsonTextBytes(reply.value) : stringBytes(reply.message)
}

/** The record's bytes of one decision (the comma before it included). */
function decisionBytes(decision: PtcHoldDecision): number {
  return textBytes(jsonText(decision as unknown as PtcJsonValue)) + 1
}

/** What the budget counts for each call besides its texts: its entry's keys, brackets and numbers. */
const ENTRY_BYTES = 128
/**
 * Bytes a record holds beyond what its journal counts: its fixed fields (id, times, limits) and
 * the recorded clock and random values (at most `MAX_DRAWS` numbers of at most 24 characters and
 * a comma, and `MAX_DRAW_BYTES` random bytes as hex, each list item quoted).
 */
export const RECORD_OVERHEAD_BYTES = 4096 + 28 * MAX_DRAWS + 2 * MAX_DRAW_BYTES

/** The most a token's record may inflate to under `maxJournalBytes`. */
export function recordBound(maxJournalBytes: number): number {
  return maxJournalBytes + RECORD_OVERHEAD_BYTES
}

/** Seals a record (in the durable thread); the journal gives what it recorded, the thread adds the key. */
export type Sealer = (request: Omit<SealRequest, 'key'>) => Promise<string>

/** Where the journal's budget is set, as its messages name it. */
const BUDGET = "maxJournalBytes, in the runtime's configuration"

export class CallJournal {
  private readonly _calls: JournalEntry[]
  private readonly _clock: number[]
  private readonly _random: number[]
  private readonly _bytes: string[]
  /** The values the worker answers with first (the record it replays). */
  readonly replayDraws: DrawValues
  /** The held call the replay must reach (its number), or 0: recording, or reached. */
  private _awaiting: number
  private _drawBytes: number
  /** Why the run cannot pause durably (it drew too much to record), once it cannot. */
  private _overflow: string | undefined
  /** UTF-8 bytes of the arguments and replies the journal holds, within `_maxBytes`. */
  private _size = 0
  /** The run paused durably: its token holds what was recorded until then, and nothing more is. */
  private _sealed = false

  private constructor(
    private readonly _facts: DurableFacts,
    private readonly _sealer: Sealer,
    private readonly _maxBytes: number,
    from: OpenedRecord | undefined,
  ) {
    this._calls = from?.calls ?? []
    this._clock = from?.clock ?? []
    this._random = from?.random ?? []
    this._bytes = from?.bytes ?? []
    this.replayDraws = { clock: [...this._clock], random: [...this._random], bytes: [...this._bytes] }
    this._awaiting = from?.held ?? 0
    this._drawBytes = this._bytes.reduce((sum, item) => sum + item.length / 2, 0)
    this._size = stringBytes(_facts.program) + (_facts.cwd === null ? 0 : stringBytes(_facts.cwd))
    for (const entry of this._calls) this._size += this._entryBytes(entry)
  }

  /** The record's bytes of `entry`. */
  private _entryBytes(entry: JournalEntry): number {
    let bytes = ENTRY_BYTES + stringBytes(entry.tool) + (entry.args === undefined ? 0 : jsonTextBytes(entry.args)) + (entry.reply ? replyBytes(entry.reply) : 0)
    for (const decision of entry.decisions ?? []) bytes += decisionBytes(decision)
    return bytes
  }

  /** A journal for a first run, sealed by `sealer`: it records from the program's start, keeping at most `maxBytes`. */
  static record(facts: DurableFacts, sealer: Sealer, maxBytes: number): CallJournal {
    return new CallJournal(facts, sealer, maxBytes, undefined)
  }

  /**
   * A journal that replays `record` with `decision` as the held call's answer, then records.
   * Throws when the record with `decision` is over `maxBytes` (a large decision value, or the
   * runtime that sealed it allowed more): the decision is kept in the run's next token, so it counts.
   */
  static replay(record: OpenedRecord, decision: PtcHoldDecision, sealer: Sealer, maxBytes: number): CallJournal {
    const held = record.calls[record.held - 1]!
    held.decisions = [...(held.decisions ?? []), decision]
    const { program, language, format, cwd, timeoutMs, maxCalls, discardCompletion } = record
    const journal = new CallJournal({ program, language, format, cwd, timeoutMs, maxCalls, discardCompletion }, sealer, maxBytes, record)
    if (journal._size > maxBytes) {
      throw new Error(`the durable token's record with this decision holds ${journal._size} bytes of program, calls and decisions, over this runtime's budget of ${maxBytes} bytes (${BUDGET})`)
    }
    return journal
  }

  /** The replay has not reached the held call yet: what the program prints is its past, not news. */
  get replaying(): boolean {
    return this._awaiting !== 0
  }

  /**
   * Call number `id` (from 1) arrived, calling `tool` with `args` of `argumentBytes` JSON bytes
   * (as they arrived): a new call's are counted against the budget before any text is written.
   */
  call(id: number, tool: string, args: PtcJsonValue | undefined, argumentBytes: number): JournalStep {
    if (id === this._awaiting) this._awaiting = 0
    const entry = this._calls[id - 1]
    if (!entry) {
      const over = this._over(ENTRY_BYTES + stringBytes(tool) + argumentBytes, `call #${id} to ${tool}`)
      if (over) return { kind: 'fail', message: over }
    }
    const text = args === undefined ? undefined : jsonText(args)
    if (!entry) {
      const over = this._charge(this._entryBytes(text === undefined ? { tool } : { tool, args: text }), `call #${id} to ${tool}`)
      if (over) return { kind: 'fail', message: over }
      this._calls[id - 1] = text === undefined ? { tool } : { tool, args: text }
      return { kind: 'live', decisions: [] }
    }
    if (entry.tool !== tool || entry.args !== text) {
      return {
        kind: 'fail',
        message: `the resumed program diverged from its recorded run at binding call #${id}: the recorded run called ${entry.tool}${shown(entry.args)}, the replay called ${tool}${shown(text)}. A durable resume runs the program again from its start, answering its earlier calls from the record, so it must make the same calls with the same arguments (the bindings and the program's inputs must not change)`,
      }
    }
    if (!entry.reply) return { kind: 'live', decisions: [...(entry.decisions ?? [])] }
    if (!entry.reply.ok) return { kind: 'replay', reply: entry.reply }
    let tokens: unknown
    try {
      tokens = JSON.parse(entry.reply.value)
    } catch {
      // Only a bug writes this: the token is signed.
    }
    if (!Array.isArray(tokens)) return { kind: 'fail', message: `the durable token's record of binding call #${id} (${tool}) has no readable value` }
    return { kind: 'replay', reply: { ok: true, value: tokens, resultBytes: entry.reply.resultBytes } }
  }

  /**
   * Call `id` got `reply` (recorded with the trace's `outcome` and result size). Returns why the
   * run must fail when keeping it puts the journal over its budget.
   */
  settled(id: number, reply: ReplyMessage, outcome: PtcCallOutcome, resultBytes: number | undefined): string | undefined {
    const entry = this._calls[id - 1]
    if (!entry || outcome === 'aborted' || this._sealed) return undefined
    // Wire tokens are a flat list: JSON.stringify does not recurse into the value's depth.
    const stored: StoredReply = reply.ok
      ? { ok: true, value: JSON.stringify(reply.value), resultBytes: resultBytes ?? 0 }
      : { ok: false, message: reply.message, outcome: outcome === 'ok' ? 'error' : outcome }
    // The reply replaces the entry's decisions: a settled call's holds are not replayed.
    const dropped = (entry.decisions ?? []).reduce((sum, decision) => sum + decisionBytes(decision), 0)
    const over = this._charge(replyBytes(stored) - dropped, `the reply to call #${id} (${entry.tool})`)
    if (over) return over
    delete entry.decisions
    entry.reply = stored
    return undefined
  }

  /** Counts `bytes` more into the journal, or says why they do not fit. */
  private _charge(bytes: number, what: string): string | undefined {
    const over = this._over(bytes, what)
    if (over === undefined) this._size += bytes
    return over
  }

  /** Why `bytes` more would not fit in the journal, if they would not. */
  private _over(bytes: number, what: string): string | undefined {
    if (this._size + bytes <= this._maxBytes) return undefined
    return `the durable journal of this run is over its budget of ${this._maxBytes} bytes (${BUDGET}): a run that pauses durably keeps every call's argument and reply for its token, and ${what} would make it ${this._size + bytes} bytes. Make fewer or smaller calls`
  }

  /** The worker reported values its clocks and randomness answered. */
  draws(report: DrawsMessage): void {
    if (this._overflow) return // nothing more is kept: the run can no longer pause durably
    const values = this._clock.length + this._random.length + this._bytes.length + report.clock.length + report.random.length + report.bytes.length
    const bytes = report.bytes.reduce((sum, item) => sum + item.length / 2, this._drawBytes)
    if (report.overflow || values > MAX_DRAWS || bytes > MAX_DRAW_BYTES) {
      this._overflow = 'the program drew more clock and random values than a token records'
      return
    }
    this._clock.push(...report.clock)
    this._random.push(...report.random)
    this._bytes.push(...report.bytes)
    this._drawBytes = bytes
  }

  /**
   * The token of the run paused on `pause` (its record is written now, and compressed and signed
   * later), or why the run cannot pause durably. Never throws: a pause that cannot be sealed must
   * fail its run at once, not leave it suspended.
   */
  seal(pause: SessionPause): { ok: true; token: Promise<string> } | { ok: false; message: string } {
    const refused = (why: string) => ({ ok: false as const, message: `${pause.tool} could not be held durably: ${why}` })
    if (this._overflow) {
      return refused(`${this._overflow} (at most ${MAX_DRAWS} values from Date.now, new Date(), Math.random and crypto.getRandomValues, and ${MAX_DRAW_BYTES} random bytes)`)
    }
    try {
      const payloadText = jsonText(pause.payload)
      const total = this._size + textBytes(payloadText) + stringBytes(pause.tool)
      if (total > this._maxBytes) return refused(`its token would hold ${total} bytes of calls and payload, over the journal's budget of ${this._maxBytes} bytes (${BUDGET})`)
      // The run ends now, but its calls still in flight settle into the journal as they end:
      // the token is sealed from a copy of what was recorded at the pause.
      this._sealed = true
      const token = this._sealer({
        facts: { ...this._facts, id: randomUUID(), issuedAt: Date.now(), held: pause.call, clock: this._clock, random: this._random, bytes: this._bytes },
        calls: this._calls.map(entryInTransit),
        pauseTool: pause.tool,
        payloadText,
      }).catch((error: unknown) => {
        throw new Error(refused(`its token could not be made (${error instanceof Error ? error.message : String(error)})`).message)
      })
      return { ok: true, token }
    } catch (error) {
      return refused(`its token could not be made (${error instanceof Error ? error.message : String(error)})`)
    }
  }

  /** Why a replay that completed before reaching its held call failed. */
  unfinished(): string {
    const held = this._calls[this._awaiting - 1]
    return `the resumed program diverged from its recorded run: it completed without making binding call #${this._awaiting} (${held?.tool ?? 'the held call'}), the call the decision answers`
  }
}
