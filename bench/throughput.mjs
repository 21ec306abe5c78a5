/**
 * Table 3: throughput. K lanes each issue `return 1` runs back to back (a fresh environment per
 * run) until the round's quota is done. A cold bare Worker per run, under the same load, is the
 * spawn-bound ceiling: every fresh environment costs one worker start-up, pooled or not (on the
 * process host, one helper process start-up as well). Beside each row, the host's event-loop delay
 * while it ran (p99 of each round's, and the largest).
 */
import { monitorEventLoopDelay } from 'node:perf_hooks'
import { Worker } from 'node:worker_threads'
import { runExpecting, startOurs } from './ours.mjs'
import { fmt, machine, now, scale, settle, summarize, table, target } from './stats.mjs'

const RUNS = scale(40, 16)
const ROUNDS = scale(2, 1)
const CONCURRENCY = [2, 8]

const echo = async (value) => value

function coldWorker() {
  return new Promise((resolve, reject) => {
    const worker = new Worker('require("node:worker_threads").parentPort.postMessage(1)', { eval: true, env: {} })
    worker.once('message', () => worker.terminate())
    worker.once('error', reject)
    worker.once('exit', resolve)
  })
}

/** `runs` calls of `runOne` over `lanes` concurrent lanes: runs/s and per-run latency. */
async function lanes(lanes, runs, runOne) {
  let started = 0
  const latencies = []
  const delay = monitorEventLoopDelay({ resolution: 5 })
  delay.enable()
  const start = now()
  await Promise.all(
    Array.from({ length: lanes }, async () => {
      while (started < runs) {
        started++
        const begin = now()
        await runOne()
        latencies.push(now() - begin)
      }
    }),
  )
  const seconds = (now() - start) / 1000
  delay.disable()
  return { seconds, latencies, delayP99: delay.percentile(99) / 1e6, delayMax: delay.max / 1e6 }
}

async function throughput() {
  console.log(`\n## Throughput (\`return 1\`, fresh environment per run)\n\n${machine()}; ${RUNS * ROUNDS} runs per row over ${ROUNDS} interleaved rounds.`)
  for (const k of CONCURRENCY) {
    const configs = [
      { name: 'ptc-runtime, thread host, poolSize 1', ours: await startOurs({ isolation: 'thread', poolSize: 1 }) },
      { name: `ptc-runtime, thread host, poolSize ${k}`, ours: await startOurs({ isolation: 'thread', poolSize: k }) },
      { name: 'ptc-runtime, thread host, poolSize 0', ours: await startOurs({ isolation: 'thread', poolSize: 0 }) },
      { name: `ptc-runtime, process host (default), poolSize ${k}`, ours: await startOurs({ isolation: 'process', poolSize: k }) },
      { name: `ptc-runtime, process host, sandbox: none, poolSize ${k}`, ours: await startOurs({ isolation: 'process', poolSize: k, sandbox: 'none' }) },
      { name: 'bare cold Worker per run (spawn-bound ceiling)' },
    ]
    const totals = new Map(configs.map((config) => [config.name, { seconds: 0, runs: 0, latencies: [], delayP99: [], delayMax: 0 }]))
    for (let round = 0; round < ROUNDS; round++) {
      for (let offset = 0; offset < configs.length; offset++) {
        const config = configs[(round + offset) % configs.length]
        const runOne = config.ours ? () => runExpecting(config.ours, 'return 1', { echo }, 1) : coldWorker
        await settle({ minMs: 50 })
        const { seconds, latencies, delayP99, delayMax } = await lanes(k, RUNS, runOne)
        const total = totals.get(config.name)
        total.seconds += seconds
        total.runs += RUNS
        total.latencies.push(...latencies)
        total.delayP99.push(delayP99)
        total.delayMax = Math.max(total.delayMax, delayMax)
      }
    }
    const ceiling = totals.get('bare cold Worker per run (spawn-bound ceiling)')
    const ceilingRate = ceiling.runs / ceiling.seconds
    table(
      `${k} concurrent runs`,
      ['engine', 'runs/s', 'vs ceiling', 'latency median ms', 'latency p95 ms', 'event-loop delay p99 / max ms'],
      [...totals].map(([name, total]) => {
        const rate = total.runs / total.seconds
        const latency = summarize(total.latencies)
        const delay = `${fmt(summarize(total.delayP99).median)} / ${fmt(total.delayMax)}`
        return [name, fmt(rate), `${fmt((rate / ceilingRate) * 100)}%`, fmt(latency.median), fmt(latency.p95), delay]
      }),
    )
    const confined = totals.get(`ptc-runtime, process host (default), poolSize ${k}`)
    const confinedRate = confined.runs / confined.seconds
    target(`default tier, fresh environments per second at ${k} concurrent runs ≥ 25`, `${fmt(confinedRate)} runs/s`, confinedRate >= 25)
    for (const config of configs) await config.ours?.dispose()
  }
}

await throughput()
