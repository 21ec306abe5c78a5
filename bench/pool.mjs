/**
 * Table: the pool under back-to-back one-shot runs. `RUNS` sequential `return 1` runs, each a
 * fresh environment, on the default configuration (the pool follows demand: poolSize 1, grown
 * within poolMemoryMb), beside the same with the pool held at poolSize (`poolMemoryMb: 0`, as
 * before it followed demand) and the thread tier (whose pool stays at poolSize), in rounds that rotate their order. The median
 * leaves out the first `FIRST` runs of each burst (the pool grows over them). The host's
 * event-loop delay during the bursts is beside each row. `node bench/run.mjs pool`.
 */
import { startOurs } from './ours.mjs'
import { fmt, loopDelayMonitor, machine, note, now, scale, settle, sleep, summarize, table, target, times } from './stats.mjs'

const RUNS = scale(100, 40)
const ROUNDS = scale(2, 1)
const FIRST = 5

const BASELINE = 'default tier, pool held at poolSize 1 (poolMemoryMb: 0)'
const CONFIGS = [
  { name: 'default tier, pool follows demand (poolSize 1, poolMemoryMb 256)', config: { isolation: 'process' } },
  { name: BASELINE, config: { isolation: 'process', poolMemoryMb: 0 } },
  { name: 'thread tier, poolSize 1 (its pool does not grow)', config: { isolation: 'thread' } },
]

async function burst(ours) {
  const latencies = []
  const delay = await loopDelayMonitor(5)
  const start = now()
  for (let index = 0; index < RUNS; index++) {
    const begin = now()
    const result = await ours.run({ program: 'return 1', bindings: [] })
    if (result.error || result.value !== 1) throw new Error(`bench run failed: ${JSON.stringify(result.error ?? result.value)}`)
    latencies.push(now() - begin)
  }
  const seconds = (now() - start) / 1000
  delay.disable()
  return { latencies, seconds, delayMax: delay.max / 1e6, delayP99: delay.percentile(99) / 1e6 }
}

console.log(`\n## Back-to-back one-shot runs and the pool\n\n${machine()}; ${ROUNDS} round(s) of ${RUNS} sequential \`return 1\` runs per row, a fresh environment each.`)
const totals = new Map(CONFIGS.map(({ name }) => [name, { later: [], all: [], seconds: 0, runs: 0, delayMax: 0, delayP99: [] }]))
for (let round = 0; round < ROUNDS; round++) {
  for (let offset = 0; offset < CONFIGS.length; offset++) {
    const { name, config } = CONFIGS[(round + offset) % CONFIGS.length]
    const ours = await startOurs(config)
    await sleep(500) // the first spare starts
    await settle({ minMs: 50 })
    const { latencies, seconds, delayMax, delayP99 } = await burst(ours)
    await ours.dispose()
    const total = totals.get(name)
    total.later.push(...latencies.slice(FIRST))
    total.all.push(...latencies)
    total.seconds += seconds
    total.runs += RUNS
    total.delayMax = Math.max(total.delayMax, delayMax)
    total.delayP99.push(delayP99)
    await settle({ minMs: 200 })
  }
}
const base = summarize(totals.get(BASELINE).later).median
table(
  `${RUNS} back-to-back one-shot \`return 1\` runs (ms; the median and p95 leave out the first ${FIRST} of each burst)`,
  ['configuration', 'median', 'vs pool held at poolSize', 'p95', 'first runs, median', 'runs/s', 'event-loop delay p99 / max ms'],
  [...totals].map(([name, total]) => {
    const later = summarize(total.later)
    const first = summarize(total.all.filter((_, index) => index % RUNS < FIRST))
    return [name, fmt(later.median), times(later.median / base), fmt(later.p95), fmt(first.median), fmt(total.runs / total.seconds), `${fmt(summarize(total.delayP99).median)} / ${fmt(total.delayMax)}`]
  }),
)
const reached = summarize(totals.get(CONFIGS[0].name).later).median
target(`default tier, back-to-back one-shot runs: median under 5 ms after the first ${FIRST}`, `${fmt(reached)} ms`, reached < 5)
note('each row starts a runtime of its own; a burst waits only for its first spare, so the first runs show what the pool starts from.')
