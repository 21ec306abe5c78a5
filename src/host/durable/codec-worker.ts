/**
 * The durable worker thread: seals records into tokens and opens tokens into records for the
 * host's `DurableThread`. A job's large parts (a record's entries, a token's text) arrive and
 * leave in pieces, so no single message holds the host's thread for long. It runs with a heap
 * budget (`resourceLimits`) sized from `maxJournalBytes`, so a token the host cannot afford ends
 * this thread, not the host.
 */
import { parentPort } from 'node:worker_threads'
import { type EntryInTransit, openRecord, sealRecord } from './codec.js'
import { DurableTokenError } from './record.js'
import type { DurableJobResult, DurableMessage } from './codec-thread.js'

const port = parentPort!
/** What arrived so far of each job: its entries (a seal) or its token's pieces (an open). */
const received = new Map<number, { calls: EntryInTransit[]; pieces: string[] }>()
/** Characters of a token sent back per message. */
const PIECE = 1024 * 1024

port.on('message', ({ id, part }: { id: number; part: DurableMessage }) => {
  const job = received.get(id) ?? { calls: [], pieces: [] }
  received.set(id, job)
  if (part.kind === 'entry') return void job.calls.push(part.entry)
  if (part.kind === 'piece') return void job.pieces.push(part.text)
  received.delete(id)
  let result: DurableJobResult
  try {
    if (part.kind === 'seal') {
      const token = sealRecord({ ...part.request, calls: job.calls })
      for (let at = 0; at < token.length; at += PIECE) port.postMessage({ id, piece: token.slice(at, at + PIECE) })
      result = { ok: true }
    } else {
      const { calls, ...record } = openRecord(job.pieces.join(''), part.keys, part.maxRecordBytes, part.maxJournalBytes)
      for (const entry of calls) port.postMessage({ id, entry })
      result = { ok: true, record }
    }
  } catch (error) {
    result = { ok: false, message: error instanceof Error ? error.message : String(error), refused: error instanceof DurableTokenError }
  }
  port.postMessage({ id, result })
})
