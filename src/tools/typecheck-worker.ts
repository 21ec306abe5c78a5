/**
 * The type check's worker thread: loads TypeScript, then answers one program at a time with the
 * compiler's messages. It runs with a heap budget (`resourceLimits`) and is terminated by the
 * host at the check's deadline, so a type-level bomb costs this worker, never the host's thread.
 */
import { parentPort, workerData } from 'node:worker_threads'
import { loadEngine } from './typecheck-engines.js'
import { type CheckRequest, type CheckerSetup, type WorkerMessage, checkedText, describeDiagnostics } from './typecheck-protocol.js'

const setup = workerData as CheckerSetup
const port = parentPort!
const send = (message: WorkerMessage) => port.postMessage(message)

try {
  const engine = await loadEngine(setup.declarations, setup.typescript)
  send({ type: 'ready', version: engine.version, ...(engine.pid !== undefined ? { pid: engine.pid } : {}) })
  port.on('message', ({ id, program }: CheckRequest) => {
    const text = checkedText(program, setup.format)
    try {
      send({ type: 'checked', id, mistakes: describeDiagnostics(engine.diagnostics(text), text, setup.format) })
    } catch {
      // The check is an aid: a compiler crash on a strange program lets it run unchecked,
      // where the runtime's own failures still describe it.
      send({ type: 'checked', id, mistakes: undefined })
    }
  })
} catch (error) {
  const reason = error instanceof Error ? error.message.split('\n')[0] : String(error)
  send({ type: 'unavailable', message: `typecheck needs the typescript package (an optional peer dependency), which could not be loaded: ${reason}` })
}
