/**
 * Table: what the heavy frame attacks cost the host's event loop and memory (issue 29, items 1
 * and 8): a forged 40 MB frame of 13 million empty objects written to a helper's channel, and a
 * legitimate call of 1.3 million empty objects (3.9 MB of JSON), on the tiers that carry them,
 * each under the default budgets. The host's event-loop delay (its longest single hold, and p99)
 * and its peak RSS growth are measured while each runs, against an idle baseline measured in the
 * same process: a run that only waits as long as the attacks took.
 *
 * `node bench/run.mjs frames`.
 */
import { monitorEventLoopDelay } from 'node:perf_hooks'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { localStreams } from './local-stream.mjs'
import { startOurs } from './ours.mjs'
import { fmt, machine, note, scale, table, target, times } from './stats.mjs'

const DIST = process.env.PTC_BENCH_DIST ? pathToFileURL(process.env.PTC_BENCH_DIST).href : new URL('../dist/index.js', import.meta.url).href
const ENTRY = fileURLToPath(new URL('stream-entry.cjs', DIST))
const FORGED_OBJECTS = scale(13_000_000, 3_000_000)
const CALL_OBJECTS = scale(1_300_000, 300_000)
/** The bound: no attack holds the host's event loop longer than this at once. */
const HOLD_BOUND_MS = 50

const localStream = localStreams(ENTRY)

const TIERS = {
  process: { isolation: 'process', sandbox: 'none' },
  stream: { isolation: { stream: localStream } },
  thread: { isolation: 'thread' },
}

// The program writes one frame line to the helper's channel itself, as a hostile program can.
const FORGED = `
const { writeSync } = await import('node:fs')
const bytes = Buffer.from(\`{"type":"message","message":[\${'{},'.repeat(${FORGED_OBJECTS - 1})}{}]}\\n\`)
for (let at = 0; at < bytes.length;) {
  try { at += writeSync(3, bytes, at) } catch (error) { if (error.code !== 'EAGAIN') throw error }
}
await new Promise(() => {})`
const CALL = `return await tools.measure(Array.from({ length: ${CALL_OBJECTS} }, () => ({})))`
// The tool only counts: what the table measures is the runtime's cost, not the tool's.
const tools = [{ global: 'tools', functions: { measure: async (value) => value.length } }]

/** Runs `program` on a fresh runtime of `config`, measuring the host meanwhile. */
async function measure(config, program, timeoutMs) {
  const ours = await startOurs({ ...config, poolSize: 0, maxOldGenerationSizeMb: 512, maxMemoryMb: 2048 })
  try {
    // Warm: the environment and the code paths, so the measurement holds only the attack.
    await ours.run({ program: 'return 1', bindings: tools })
    globalThis.gc?.()
    const delay = monitorEventLoopDelay({ resolution: 5 })
    const rssBefore = process.memoryUsage().rss
    let rssPeak = rssBefore
    const sampler = setInterval(() => (rssPeak = Math.max(rssPeak, process.memoryUsage().rss)), 20)
    delay.enable()
    const started = performance.now()
    const result = await ours.run({ program, bindings: tools, timeoutMs })
    const elapsedMs = performance.now() - started
    delay.disable()
    clearInterval(sampler)
    return {
      outcome: result.error ? result.error.kind : `ok ${JSON.stringify(result.value)}`,
      elapsedMs,
      maxMs: delay.max / 1e6,
      p99Ms: delay.percentile(99) / 1e6,
      rssMb: (rssPeak - rssBefore) / 2 ** 20,
    }
  } finally {
    await ours.dispose()
  }
}

console.log(`\n## Frames: the host's event loop under heavy frames\n\n${machine()}`)
const scenarios = [
  ['forged 40 MB frame', 'process', FORGED, 60_000],
  ['forged 40 MB frame', 'stream', FORGED, 60_000],
  ['call of 1.3 M empty objects', 'process', CALL, 60_000],
  ['call of 1.3 M empty objects', 'stream', CALL, 60_000],
  ['call of 1.3 M empty objects', 'thread', CALL, 60_000],
]
const measured = []
for (const [name, tier, program, timeoutMs] of scenarios) measured.push({ name, tier, ...(await measure(TIERS[tier], program, timeoutMs)) })
// The baseline waits as long as the longest attack took, on the process tier.
const waitMs = Math.round(Math.max(...measured.map((row) => row.elapsedMs)))
const idle = await measure(TIERS.process, `await new Promise((resolve) => setTimeout(resolve, ${waitMs}))`, waitMs + 30_000)
table('the host while each attack runs (default budgets)', ['attack', 'tier', 'outcome', 'run ms', 'longest hold ms', 'vs idle', 'p99 ms', 'peak RSS growth MiB'], [
  ['idle run (baseline)', 'process', idle.outcome, fmt(idle.elapsedMs), fmt(idle.maxMs), '1x', fmt(idle.p99Ms), fmt(idle.rssMb)],
  ...measured.map((row) => [row.name, row.tier, row.outcome, fmt(row.elapsedMs), fmt(row.maxMs), times(row.maxMs / idle.maxMs), fmt(row.p99Ms), fmt(row.rssMb)]),
])
for (const row of measured) {
  target(`${row.name} (${row.tier}) holds the loop at most ${HOLD_BOUND_MS} ms more than idle`, `${fmt(row.maxMs)} ms vs ${fmt(idle.maxMs)} ms idle`, row.maxMs <= idle.maxMs + HOLD_BOUND_MS)
}
note('forged frames fail the run as protocol at the first container where the protocol has none; the calls reach the tool, which answers how many objects it got')
note('RSS is the whole host process; on the thread tier it includes the worker thread\'s own heap (the program\'s objects and its copy of the arguments)')
