/**
 * The durable worker thread: seals records into tokens and opens tokens into records, one job at
 * a time, for the host's `DurableThread`. It runs with a heap budget (`resourceLimits`) sized
 * from `maxJournalBytes`, so a token the host cannot afford ends this thread, not the host.
 */
import { parentPort } from 'node:worker_threads'
import { openRecord, sealRecord } from './durable-codec.js'
import { DurableTokenError } from './durable.js'
import type { DurableJob, DurableJobResult } from './durable-thread.js'

const port = parentPort!

port.on('message', ({ id, job }: { id: number; job: DurableJob }) => {
  let result: DurableJobResult
  try {
    const value = job.kind === 'seal' ? sealRecord(job.request) : openRecord(job.token, job.keys, job.maxRecordBytes, job.maxJournalBytes)
    result = { ok: true, value }
  } catch (error) {
    result = { ok: false, message: error instanceof Error ? error.message : String(error), refused: error instanceof DurableTokenError }
  }
  port.postMessage({ id, result })
})
