/**
 * A runtime's durable tokens, as its configuration says: the keys that sign and verify them
 * (`durableKey`, the first signs), how long they live (`durableTokenLifetimeMs`), how much a
 * run's journal may hold (`maxJournalBytes`), and the store that lets each resume at most once
 * (`durableStore`). The provider asks it for a recording journal when a run pauses durably, and
 * opens, checks and claims a token before its replay starts.
 */
import type { PtcHoldDecision } from '../../seam/types.js'
import { type DurableFacts, DurableTokenError, type OpenedRecord, durableKeys } from './record.js'
import { entryFromTransit, tokenBound } from './codec.js'
import { MemoryDurableStore, type PtcDurableStore } from './store.js'
import { DurableThread } from './codec-thread.js'
import { CallJournal, type Sealer, recordBound } from './journal.js'

/** The configuration fields this reads (validated by `checkConfig`). */
export interface DurableConfig {
  durableKey: string | Buffer | Array<string | Buffer>
  durableStore?: PtcDurableStore | undefined
  durableTokenLifetimeMs?: number | undefined
  maxJournalBytes: number
}

export class DurableTokens {
  private readonly _keys: Buffer[]
  private readonly _store: PtcDurableStore
  private readonly _lifetimeMs: number | undefined
  private readonly _maxBytes: number
  /** Where tokens are sealed and opened, off the host's thread. */
  private readonly _thread: DurableThread
  private readonly _sealer: Sealer

  constructor(config: DurableConfig) {
    this._keys = durableKeys(config.durableKey)
    this._store = config.durableStore ?? new MemoryDurableStore()
    this._lifetimeMs = config.durableTokenLifetimeMs
    this._maxBytes = config.maxJournalBytes
    this._thread = new DurableThread(recordBound(this._maxBytes))
    this._sealer = (request) => this._thread.seal({ ...request, key: this._keys[0]! })
  }

  /** A journal that records a run from its start, for a token signed with the first key. */
  record(facts: DurableFacts): CallJournal {
    return CallJournal.record(facts, this._sealer, this._maxBytes)
  }

  /**
   * The record of `token`: its length checked against the longest token `maxJournalBytes` allows,
   * its signature under every key before anything of it is read, then its version, its size (its
   * record may inflate to what `maxJournalBytes` allows a token) and fields, then its age. Rejects with a `DurableTokenError` saying what is wrong.
   */
  async open(token: string): Promise<OpenedRecord> {
    // Checked before any of it is sent to the thread: a forged token of hundreds of megabytes
    // would fill the thread's heap, sized for the largest genuine token.
    const bound = tokenBound(recordBound(this._maxBytes))
    if (token.length > bound) {
      throw new DurableTokenError(
        `the durable token is ${token.length} characters long, over the ${bound} a token sealed under this runtime's maxJournalBytes (${this._maxBytes}) can have: it was forged, or sealed by a runtime with a larger maxJournalBytes; resume it with one as large`,
      )
    }
    const opened = await this._thread.open(token, this._keys, recordBound(this._maxBytes), this._maxBytes)
    const record: OpenedRecord = { ...opened, calls: opened.calls.map(entryFromTransit) }
    const age = Date.now() - record.issuedAt
    if (this._lifetimeMs !== undefined && age > this._lifetimeMs) {
      throw new DurableTokenError(`the durable token expired: it was issued ${age} ms ago, and tokens live ${this._lifetimeMs} ms (durableTokenLifetimeMs)`)
    }
    return record
  }

  /** The journal that replays `record` with `decision`; throws when the record is over this runtime's budget. */
  replay(record: OpenedRecord, decision: PtcHoldDecision): CallJournal {
    return CallJournal.replay(record, decision, this._sealer, this._maxBytes)
  }

  /**
   * Spends the token of `record`: resolves when this is its first resume, and rejects when it
   * was resumed before (here, or wherever the store is shared) or the store fails.
   */
  async claim(record: OpenedRecord): Promise<void> {
    const expiresAt = this._lifetimeMs === undefined ? null : record.issuedAt + this._lifetimeMs
    let claimed: unknown
    try {
      claimed = await this._store.claim(record.id, expiresAt)
    } catch (error) {
      throw new DurableTokenError(`durableStore.claim failed, so the token is not resumed: ${error instanceof Error ? error.message : String(error)}`)
    }
    if (typeof claimed !== 'boolean') throw new DurableTokenError(`durableStore.claim must resolve true or false, got ${claimed === null ? 'null' : typeof claimed}`)
    if (!claimed) throw new DurableTokenError('the durable token was already resumed: a token resumes at most once (its run paused again gives a new token)')
  }

  /** Ends the thread that seals and opens tokens (it also ends by itself when idle). */
  close(): void {
    this._thread.close()
  }
}
