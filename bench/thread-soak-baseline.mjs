/**
 * The thread soak's baseline (bench/thread-soak.mjs starts it as a process of its own): the same
 * number of runs, as many at a time, each a bare `worker_threads` Worker started with the
 * options ptc-runtime starts its own with (a transferred port, an empty environment, a heap
 * limit, no captured stdio) that answers one message and is terminated. No ptc-runtime code
 * runs here, so what this process keeps after many workers is Node's (and glibc's) own share,
 * and the soak's growth beyond it is the library's. Prints one JSON line per checkpoint.
 */
import { MessageChannel, Worker } from 'node:worker_threads'
import { soak } from './soak-memory.mjs'

const TOTAL = Number(process.env.BENCH_SOAK_RUNS)
const CHECKPOINT = Number(process.env.BENCH_SOAK_CHECKPOINT)
const LANES = Number(process.env.BENCH_SOAK_LANES)
if (!(TOTAL > 0 && CHECKPOINT > 0 && LANES > 0)) throw new Error('thread-soak-baseline: started by bench/thread-soak.mjs')

const WORKER_CODE = `
const { workerData } = require('node:worker_threads')
const port = workerData.port
port.on('message', (message) => port.postMessage(JSON.stringify({ value: message })))
port.postMessage(JSON.stringify({ type: 'ready' }))
`

/** One bare worker: started, ready, asked once, answered, terminated. */
async function oneWorker() {
  const { port1, port2 } = new MessageChannel()
  const worker = new Worker(WORKER_CODE, {
    eval: true,
    workerData: { port: port2 },
    transferList: [port2],
    env: {},
    execArgv: ['--no-warnings'],
    resourceLimits: { maxOldGenerationSizeMb: 512 },
    stdout: false,
    stderr: false,
  })
  const next = () => new Promise((resolve) => port1.once('message', resolve))
  await next()
  port1.postMessage('x'.repeat(200))
  await next()
  await worker.terminate()
  port1.close()
}

await soak({ total: TOTAL, checkpoint: CHECKPOINT, lanes: LANES }, oneWorker, (row) => {
  console.error(`thread-soak baseline: ${row.runs} bare workers, RSS ${row.rss.toFixed(1)} MiB (malloc ${row.malloc?.toFixed(1)}, young generation ${row.young.toFixed(1)})`)
  console.log(JSON.stringify(row))
})
