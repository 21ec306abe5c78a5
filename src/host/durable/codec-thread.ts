/**
 * The host's side of the durable worker thread (`durable-worker.ts`): every seal and open of a
 * token runs there, so a token of tens of megabytes never holds the host's event loop: what
 * stays here is copying the record's entries to the thread and the token back, in pieces (an
 * entry, or a megabyte of token, per turn of the event loop), without parsing them. One thread per runtime, started at its first job and kept warm between jobs; it
 * keeps the process alive only while a job runs, and ends after `IDLE_MS` without one. Its heap
 * is bounded (`resourceLimits`) by what one token within `maxJournalBytes` needs, so it serves one
 * job at a time: the others wait on the host, nothing of them sent yet (six 30 MB tokens opened
 * at once filled it). A thread that runs out fails its one job clearly, and the next job starts
 * a fresh one.
 */
import { Worker } from 'node:worker_threads'
import type { EntryInTransit, OpenedInTransit, SealRequest } from './codec.js'
import { DurableTokenError } from './record.js'

/** One message of a job to the thread: its large parts in pieces, then what ends it. */
export type DurableMessage =
  | { kind: 'entry'; entry: EntryInTransit }
  | { kind: 'piece'; text: string }
  | { kind: 'seal'; request: Omit<SealRequest, 'calls'> }
  | { kind: 'open'; keys: Buffer[]; maxRecordBytes: number; maxJournalBytes: number }

/** How a job ended: `refused` when the token itself is at fault (a `DurableTokenError`). */
export type DurableJobResult =
  | { ok: true; record?: Omit<OpenedInTransit, 'calls'> }
  | { ok: false; message: string; refused: boolean }

/** What the thread sends back: pieces of a token, entries of a record, then the result. */
type Reply = { id: number; piece: string } | { id: number; entry: EntryInTransit } | { id: number; result: DurableJobResult }

/** A warm thread left without a job this long ends, so an idle runtime holds no thread. */
const IDLE_MS = 10_000
const MIB = 1024 * 1024
/** Characters of a token sent per message. */
const PIECE = 1024 * 1024
const WORKER_FILE = new URL('./durable-worker.js', import.meta.url)

interface Pending {
  pieces: string[]
  calls: EntryInTransit[]
  resolve: (result: { token: string } | { record: OpenedInTransit }) => void
  reject: (error: Error) => void
}

/** Lets the event loop run between two pieces of a job. */
const turn = () => new Promise((resolve) => setImmediate(resolve))

export class DurableThread {
  private _worker: Worker | undefined
  private _idle: NodeJS.Timeout | undefined
  private readonly _pending = new Map<number, Pending>()
  private _nextId = 0
  private readonly _heapMb: number
  /** Settles when the last job queued has ended: the next one starts then. */
  private _queue: Promise<unknown> = Promise.resolve()
  /** Counts `close` calls: a job queued before one fails instead of starting a thread after it. */
  private _closes = 0

  /** A thread for tokens whose records inflate to at most `maxRecordBytes`. */
  constructor(maxRecordBytes: number) {
    // The record's text, its parse and the token's base64 are each about its size, some as
    // two-byte strings: six times it, and room for the thread's own start.
    this._heapMb = 64 + Math.ceil((6 * maxRecordBytes) / MIB)
  }

  /** The token of the record `request` describes; its entries are sent one per turn of the event loop. */
  async seal({ calls, ...request }: SealRequest): Promise<string> {
    const result = await this._run(async (send) => {
      for (const entry of calls) {
        send({ kind: 'entry', entry })
        await turn()
      }
      send({ kind: 'seal', request })
    })
    return (result as { token: string }).token
  }

  /** The record of `token`, or a `DurableTokenError` saying what is wrong with it. */
  async open(token: string, keys: Buffer[], maxRecordBytes: number, maxJournalBytes: number): Promise<OpenedInTransit> {
    const result = await this._run(async (send) => {
      for (let at = 0; at < token.length; at += PIECE) {
        send({ kind: 'piece', text: token.slice(at, at + PIECE) })
        await turn()
      }
      send({ kind: 'open', keys, maxRecordBytes, maxJournalBytes })
    })
    return (result as { record: OpenedInTransit }).record
  }

  private _run(post: (send: (part: DurableMessage) => void) => Promise<void>): Promise<{ token: string } | { record: OpenedInTransit }> {
    const closes = this._closes
    const job = this._queue.then(() => {
      if (this._closes !== closes) throw new Error("the durable token's thread was closed")
      return this._send(post)
    })
    this._queue = job.catch(() => undefined)
    return job
  }

  private async _send(post: (send: (part: DurableMessage) => void) => Promise<void>): Promise<{ token: string } | { record: OpenedInTransit }> {
    const worker = this._started()
    clearTimeout(this._idle)
    worker.ref()
    const id = this._nextId++
    const answered = new Promise<{ token: string } | { record: OpenedInTransit }>((resolve, reject) => {
      this._pending.set(id, { pieces: [], calls: [], resolve, reject })
    })
    // A thread that failed meanwhile has rejected the job: what is left to send goes nowhere.
    await post((part) => {
      if (this._pending.has(id)) worker.postMessage({ id, part })
    })
    return answered
  }

  private _started(): Worker {
    if (this._worker) return this._worker
    const worker = new Worker(WORKER_FILE, { resourceLimits: { maxOldGenerationSizeMb: this._heapMb, maxYoungGenerationSizeMb: 32 } })
    worker.on('message', (reply: Reply) => {
      const pending = this._pending.get(reply.id)
      if (!pending) return
      if ('piece' in reply) return void pending.pieces.push(reply.piece)
      if ('entry' in reply) return void pending.calls.push(reply.entry)
      this._pending.delete(reply.id)
      const { result } = reply
      if (!result.ok) pending.reject(result.refused ? new DurableTokenError(result.message) : new Error(result.message))
      else if (result.record) pending.resolve({ record: { ...result.record, calls: pending.calls } })
      else pending.resolve({ token: pending.pieces.join('') })
      if (this._pending.size === 0) this._park(worker)
    })
    const failed = (why: string) => {
      if (this._worker !== worker) return
      this._worker = undefined
      clearTimeout(this._idle)
      const pending = [...this._pending.values()]
      this._pending.clear()
      for (const { reject } of pending) reject(new Error(why))
      void worker.terminate()
    }
    worker.on('error', (error: Error & { code?: string }) => {
      failed(
        error.code === 'ERR_WORKER_OUT_OF_MEMORY'
          ? `the durable token needed more than the ${this._heapMb} MB its thread may use (sized from maxJournalBytes)`
          : `the durable token's thread failed: ${error.message}`,
      )
    })
    worker.on('exit', () => failed("the durable token's thread ended before it answered"))
    this._worker = worker
    return worker
  }

  /** No job left: the thread no longer keeps the process alive, and ends if none comes. */
  private _park(worker: Worker): void {
    worker.unref()
    clearTimeout(this._idle)
    this._idle = setTimeout(() => this.close(), IDLE_MS).unref()
  }

  /** Ends the thread now (a job after this starts a new one); jobs in progress or queued fail. */
  close(): void {
    this._closes++
    const worker = this._worker
    if (!worker) return
    clearTimeout(this._idle)
    this._worker = undefined
    for (const { reject } of this._pending.values()) reject(new Error("the durable token's thread was closed"))
    this._pending.clear()
    void worker.terminate()
  }
}
