/**
 * The host's side of the durable worker thread (`durable-worker.ts`): every seal and open of a
 * token runs there, so a token of tens of megabytes never holds the host's event loop (what
 * stays here is handing the record's strings to the thread and the token back, copies without
 * parsing). One thread per runtime, started at its first job and kept warm between jobs; it
 * keeps the process alive only while a job runs, and ends after `IDLE_MS` without one. Its heap
 * is bounded (`resourceLimits`) by what a token within `maxJournalBytes` needs: a thread that
 * runs out fails its job clearly, and the next job starts a fresh one.
 */
import { Worker } from 'node:worker_threads'
import type { OpenedInTransit, SealRequest } from './durable-codec.js'
import { DurableTokenError } from './durable.js'

/** One job for the thread. */
export type DurableJob =
  | { kind: 'seal'; request: SealRequest }
  | { kind: 'open'; token: string; keys: Buffer[]; maxRecordBytes: number; maxJournalBytes: number }

/** How a job ended: `refused` when the token itself is at fault (a `DurableTokenError`). */
export type DurableJobResult = { ok: true; value: string | OpenedInTransit } | { ok: false; message: string; refused: boolean }

/** A warm thread left without a job this long ends, so an idle runtime holds no thread. */
const IDLE_MS = 10_000
const MIB = 1024 * 1024
const WORKER_FILE = new URL('./durable-worker.js', import.meta.url)

interface Pending {
  resolve: (value: string | OpenedInTransit) => void
  reject: (error: Error) => void
}

export class DurableThread {
  private _worker: Worker | undefined
  private _idle: NodeJS.Timeout | undefined
  private readonly _pending = new Map<number, Pending>()
  private _nextId = 0
  private readonly _heapMb: number

  /** A thread for tokens whose records inflate to at most `maxRecordBytes`. */
  constructor(maxRecordBytes: number) {
    // The record's text, its parse and the token's base64 are each about its size, some as
    // two-byte strings: six times it, and room for the thread's own start.
    this._heapMb = 64 + Math.ceil((6 * maxRecordBytes) / MIB)
  }

  /** The token of the record `request` describes. */
  async seal(request: SealRequest): Promise<string> {
    return (await this._run({ kind: 'seal', request })) as string
  }

  /** The record of `token`, or a `DurableTokenError` saying what is wrong with it. */
  async open(token: string, keys: Buffer[], maxRecordBytes: number, maxJournalBytes: number): Promise<OpenedInTransit> {
    return (await this._run({ kind: 'open', token, keys, maxRecordBytes, maxJournalBytes })) as OpenedInTransit
  }

  private _run(job: DurableJob): Promise<string | OpenedInTransit> {
    const worker = this._started()
    clearTimeout(this._idle)
    worker.ref()
    const id = this._nextId++
    return new Promise<string | OpenedInTransit>((resolve, reject) => {
      this._pending.set(id, { resolve, reject })
      worker.postMessage({ id, job })
    })
  }

  private _started(): Worker {
    if (this._worker) return this._worker
    const worker = new Worker(WORKER_FILE, { resourceLimits: { maxOldGenerationSizeMb: this._heapMb, maxYoungGenerationSizeMb: 32 } })
    worker.on('message', ({ id, result }: { id: number; result: DurableJobResult }) => {
      const pending = this._pending.get(id)
      this._pending.delete(id)
      if (pending) {
        if (result.ok) pending.resolve(result.value)
        else pending.reject(result.refused ? new DurableTokenError(result.message) : new Error(result.message))
      }
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

  /** Ends the thread now (a job after this starts a new one); jobs in progress fail. */
  close(): void {
    const worker = this._worker
    if (!worker) return
    clearTimeout(this._idle)
    this._worker = undefined
    for (const { reject } of this._pending.values()) reject(new Error("the durable token's thread was closed"))
    this._pending.clear()
    void worker.terminate()
  }
}
