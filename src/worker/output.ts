/**
 * The worker's half of the output ledger. It meters every entry as the host will, so a flood
 * stops at the cap instead of being buffered without bound, and it batches entries into one
 * message per microtask turn (or per 256 KiB) to keep the port quiet.
 *
 * The host re-meters everything: this side only has to be early, not trusted.
 */
import type { MessagePort } from 'node:worker_threads'
import { fitJsonString, jsonStringByteLength } from '../json/index.js'
import type { OutputItem } from '../protocol.js'
import { post, queueTask } from './intrinsics.js'

const FLUSH_BYTES = 256 * 1024

export class OutputChannel {
  /** Bytes still free in the ledger: starts after `[` `]`. */
  private _free: number
  private _count = 0
  private _batch: OutputItem[] = []
  private _batchBytes = 0
  private _scheduled = false
  /** True once an entry did not fit; later writes are dropped. */
  overflowed = false

  constructor(
    private readonly _port: MessagePort,
    private readonly _run: number,
    maxOutputBytes: number,
    private readonly _onOverflow: () => void,
  ) {
    this._free = maxOutputBytes - 2
  }

  /** Bytes left for the completion or failure message. */
  get free(): number {
    return this._free
  }

  text(text: string): void {
    if (this.overflowed || text === '') return
    const cost = jsonStringByteLength(text) + (this._count > 0 ? 1 : 0)
    if (cost <= this._free) return this._append(text, cost)
    const prefix = fitJsonString(text, this._free - (this._count > 0 ? 1 : 0))
    if (prefix !== '') this._append(prefix, this._free)
    this._overflow()
  }

  image(attachmentId: string, descriptorBytes: number): void {
    if (this.overflowed) return
    const cost = descriptorBytes + (this._count > 0 ? 1 : 0)
    if (cost > this._free) return this._overflow()
    this._append({ attachmentId }, cost)
  }

  /** Sends what is batched now; called before any message that must follow the output. */
  flush(): void {
    if (this._batch.length === 0) return
    const items = this._batch
    this._batch = []
    this._batchBytes = 0
    post(this._port, { type: 'output', run: this._run, items })
  }

  private _append(item: OutputItem, cost: number): void {
    this._free -= cost
    this._count++
    this._batch[this._batch.length] = item
    this._batchBytes += cost
    if (this._batchBytes >= FLUSH_BYTES) return this.flush()
    if (!this._scheduled) {
      this._scheduled = true
      queueTask(() => {
        this._scheduled = false
        this.flush()
      })
    }
  }

  private _overflow(): void {
    this.overflowed = true
    this.flush()
    this._onOverflow()
  }
}
