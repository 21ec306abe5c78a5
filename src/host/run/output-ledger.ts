/**
 * The host's output ledger: one cap for text entries, image descriptors and the completion or
 * failure message together, counted as the UTF-8 bytes of their JSON serialization
 * (`[` `]`, commas, each entry's JSON, plus the value's or the message's JSON). The worker
 * meters too, but only this count is trusted.
 */
import { fitJsonString, jsonByteLength, jsonStringByteLength } from '../../json/index.js'
import type { ImageAttachmentRef, PtcCallRecord, PtcJsonValue, PtcOutput, PtcRunFailure, PtcRunResult } from '../../seam/types.js'
import { ARRIVED_BYTES } from '../connection/json-lines.js'

function entryBytes(entry: PtcOutput): number {
  return entry.type === 'text' ? jsonStringByteLength(entry.text) : jsonByteLength(entry as unknown as PtcJsonValue)
}

/**
 * A completion's JSON bytes: a container's as it arrived (json-lines.ts counted them, as it does
 * a call's arguments), so a large value is not walked again; a scalar's from the value itself.
 */
function completionBytes(value: PtcJsonValue): number {
  if (typeof value === 'object' && value !== null) return ARRIVED_BYTES.get(value) ?? jsonByteLength(value)
  if (typeof value === 'string') return jsonStringByteLength(value)
  // A finite number's JSON is its string (lossless JSON has no -0), as are true, false and null's.
  return String(value).length
}

export class OutputLedger {
  private _entries: PtcOutput[] = []
  /** Bytes used by `[`, `]`, entries and separators, answers taken before included. */
  private _used = 2
  /** `_used` when the last answer took its output: the cap is one for the whole run. */
  private _taken = 2
  private _overflowed = false

  constructor(readonly maxBytes: number) {}

  get limitMessage(): string {
    return `output exceeded ${this.maxBytes} bytes (the cap on printed output plus the result); print less or return a smaller value`
  }

  /** Records that output was dropped elsewhere (the worker's own meter hit the cap first). */
  markOverflow(): void {
    this._overflowed = true
  }

  /** Adds a text entry; returns false once the cap has been crossed. */
  text(text: string): boolean {
    return text === '' ? !this._overflowed : this._add({ type: 'text', text })
  }

  image(attachment: ImageAttachmentRef): boolean {
    return this._add({ type: 'image', attachment })
  }

  /**
   * The output since the last answer, for a paused answer; the next answer starts after it, and
   * what it took still counts against the cap.
   */
  take(): PtcOutput[] {
    const entries = this._entries
    this._entries = []
    this._taken = this._used
    return entries
  }

  /**
   * Builds the result, turning it into `output-limit` when anything does not fit. The call
   * trace is not metered: `maxCalls` bounds it.
   */
  finish(outcome: { value?: PtcJsonValue } | { error: PtcRunFailure }, calls: PtcCallRecord[] = []): PtcRunResult {
    if (!this._overflowed) {
      if ('error' in outcome) {
        if (this._used + jsonStringByteLength(outcome.error.message) <= this.maxBytes) {
          return { output: this._entries, error: outcome.error, calls }
        }
      } else if (outcome.value === undefined) {
        return { output: this._entries, calls }
      } else if (this._used + completionBytes(outcome.value) <= this.maxBytes) {
        return { output: this._entries, value: outcome.value, calls }
      }
    }
    return { ...this._limited(), calls }
  }

  private _add(entry: PtcOutput): boolean {
    if (this._overflowed) return false
    const cost = entryBytes(entry) + (this._used > 2 ? 1 : 0)
    if (this._used + cost > this.maxBytes) {
      this._overflowed = true
      this._entries.push(entry) // kept for trimming in _limited(), which cuts it to fit
      return false
    }
    this._used += cost
    this._entries.push(entry)
    return true
  }

  /** The fitting prefix of the output plus an `output-limit` failure whose message also fits. */
  private _limited(): Omit<PtcRunResult, 'calls'> {
    let message = this.limitMessage
    let messageBytes = jsonStringByteLength(message)
    if (2 + messageBytes > this.maxBytes) {
      message = fitJsonString(message, this.maxBytes - 2)
      messageBytes = jsonStringByteLength(message)
    }
    const budget = this.maxBytes - messageBytes
    const output: PtcOutput[] = []
    let used = this._taken
    for (const entry of this._entries) {
      const separator = used > 2 ? 1 : 0
      const cost = entryBytes(entry) + separator
      if (used + cost <= budget) {
        output.push(entry)
        used += cost
        continue
      }
      if (entry.type === 'text') {
        const prefix = fitJsonString(entry.text, budget - used - separator)
        if (prefix !== '') output.push({ type: 'text', text: prefix })
      }
      break
    }
    return { output, error: { kind: 'output-limit', message } }
  }
}
