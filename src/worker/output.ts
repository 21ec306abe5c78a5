/**
 * The worker's half of the output ledger. It meters every entry as the host will, so a flood
 * stops at the cap instead of being buffered without bound. Entries are posted as they are
 * written, never held back: a program that prints and then spins in a synchronous loop must
 * still have its output in the timeout result.
 *
 * The host re-meters everything: this side only has to be early, not trusted.
 */
import { fitJsonString, jsonStringByteLength } from '../json/index.js'
import type { OutputItem } from '../protocol/messages.js'
import type { Outbox } from './outbox.js'

export class OutputChannel {
  /** Bytes still free in the ledger: starts after `[` `]`. */
  private _free: number
  private _count = 0
  /** True once an entry did not fit; later writes are dropped. */
  overflowed = false
  /** True once the run settled: what a program prints afterwards belongs to no run. */
  private _closed = false

  constructor(
    private readonly _post: Outbox,
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

  close(): void {
    this._closed = true
  }

  text(text: string): void {
    if (this.overflowed || this._closed || text === '') return
    const separator = this._count > 0 ? 1 : 0
    const cost = jsonStringByteLength(text) + separator
    if (cost <= this._free) return this._send(text, cost)
    const prefix = fitJsonString(text, this._free - separator)
    if (prefix !== '') this._send(prefix, this._free)
    this._overflow()
  }

  image(attachmentId: string, descriptorBytes: number): void {
    if (this.overflowed || this._closed) return
    const cost = descriptorBytes + (this._count > 0 ? 1 : 0)
    if (cost > this._free) return this._overflow()
    this._send({ attachmentId }, cost)
  }

  private _send(item: OutputItem, cost: number): void {
    this._free -= cost
    this._count++
    this._post({ type: 'output', run: this._run, items: [item] })
  }

  private _overflow(): void {
    this.overflowed = true
    this._onOverflow()
  }
}
