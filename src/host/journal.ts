/**
 * The journal of a durable run (`pause: 'durable'`): the run's binding calls and the values its
 * clocks and randomness answered, recorded while it runs, and sealed into a token when a call is
 * held. A resumed run starts from the token's journal: the session replays it, so the program,
 * run again from its start in a fresh environment, gets every recorded call's reply from the
 * journal (the tool does not run again) as long as it makes the same calls with the same
 * arguments, in order; the held call's host function runs again with the decision as its hold's
 * answer; and from there the run goes on live, recording, and may pause durably again.
 */
import { isDeepStrictEqual } from 'node:util'
import { MAX_DRAWS, MAX_DRAW_BYTES, type DrawValues, type DrawsMessage, type ReplyMessage } from '../protocol.js'
import type { PtcCallOutcome, PtcHoldDecision, PtcJsonValue } from '../seam/types.js'
import { type DurableFacts, type DurableRecord, type JournalEntry, type RecordedReply, sealToken } from './durable.js'
import type { SessionPause } from './holds.js'

/** What the dispatcher does with a call: answer it from the journal, run it, or fail the run. */
export type JournalStep =
  | { kind: 'replay'; reply: RecordedReply }
  /** Run the host function; its first holds are answered with `decisions`, in order. */
  | { kind: 'live'; decisions: PtcHoldDecision[] }
  | { kind: 'diverged'; message: string }

/** What the tokens name of a value in a message: JSON, cut short. */
function shown(value: PtcJsonValue | undefined): string {
  if (value === undefined) return '()'
  const text = JSON.stringify(value)
  return `(${text.length > 200 ? `${text.slice(0, 200)}…` : text})`
}

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

  private constructor(
    private readonly _facts: DurableFacts,
    private readonly _key: Buffer,
    from: DurableRecord | undefined,
  ) {
    this._calls = from?.calls ?? []
    this._clock = from?.clock ?? []
    this._random = from?.random ?? []
    this._bytes = from?.bytes ?? []
    this.replayDraws = { clock: [...this._clock], random: [...this._random], bytes: [...this._bytes] }
    this._awaiting = from?.held ?? 0
    this._drawBytes = this._bytes.reduce((sum, item) => sum + item.length / 2, 0)
  }

  /** A journal for a first run: it records from the program's start. */
  static record(facts: DurableFacts, key: Buffer): CallJournal {
    return new CallJournal(facts, key, undefined)
  }

  /** A journal that replays `record` with `decision` as the held call's answer, then records. */
  static replay(record: DurableRecord, decision: PtcHoldDecision, key: Buffer): CallJournal {
    const held = record.calls[record.held - 1]!
    held.decisions = [...(held.decisions ?? []), decision]
    const { program, language, format, cwd, timeoutMs, maxCalls, discardCompletion } = record
    return new CallJournal({ program, language, format, cwd, timeoutMs, maxCalls, discardCompletion }, key, record)
  }

  /** The replay has not reached the held call yet: what the program prints is its past, not news. */
  get replaying(): boolean {
    return this._awaiting !== 0
  }

  /** Call number `id` (from 1) arrived, calling `tool` with `args`. */
  call(id: number, tool: string, args: PtcJsonValue | undefined): JournalStep {
    if (id === this._awaiting) this._awaiting = 0
    const entry = this._calls[id - 1]
    if (!entry) {
      this._calls[id - 1] = args === undefined ? { tool } : { tool, args }
      return { kind: 'live', decisions: [] }
    }
    if (entry.tool !== tool || !isDeepStrictEqual(entry.args, args)) {
      return {
        kind: 'diverged',
        message: `the resumed program diverged from its recorded run at binding call #${id}: the recorded run called ${entry.tool}${shown(entry.args)}, the replay called ${tool}${shown(args)}. A durable resume runs the program again from its start, answering its earlier calls from the record, so it must make the same calls with the same arguments (the bindings and the program's inputs must not change)`,
      }
    }
    if (entry.reply) return { kind: 'replay', reply: entry.reply }
    return { kind: 'live', decisions: [...(entry.decisions ?? [])] }
  }

  /** Call `id` got `reply` (recorded with the trace's `outcome` and result size). */
  settled(id: number, reply: ReplyMessage, outcome: PtcCallOutcome, resultBytes: number | undefined): void {
    const entry = this._calls[id - 1]
    if (!entry || outcome === 'aborted') return
    delete entry.decisions
    entry.reply = reply.ok
      ? { ok: true, value: reply.value as unknown[], resultBytes: resultBytes ?? 0 }
      : { ok: false, message: reply.message, outcome: outcome === 'ok' ? 'error' : outcome }
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

  /** The token of the run paused on `pause`, or why the run cannot pause durably. */
  seal(pause: SessionPause): { ok: true; token: string } | { ok: false; message: string } {
    if (this._overflow) {
      return { ok: false, message: `${pause.tool} could not be held durably: ${this._overflow} (at most ${MAX_DRAWS} values from Date.now, new Date(), Math.random and crypto.getRandomValues, and ${MAX_DRAW_BYTES} random bytes)` }
    }
    const record: DurableRecord = {
      ...this._facts,
      calls: this._calls,
      held: pause.call,
      pause: { tool: pause.tool, ...(pause.args === undefined ? {} : { args: pause.args }), payload: pause.payload },
      clock: this._clock,
      random: this._random,
      bytes: this._bytes,
    }
    return { ok: true, token: sealToken(record, this._key) }
  }

  /** Why a replay that completed before reaching its held call failed. */
  unfinished(): string {
    const held = this._calls[this._awaiting - 1]
    return `the resumed program diverged from its recorded run: it completed without making binding call #${this._awaiting} (${held?.tool ?? 'the held call'}), the call the decision answers`
  }
}
