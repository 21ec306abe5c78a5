/**
 * Table: the thread host's memory per run. 20 000 one-shot runs on `isolation: 'thread'`, a few
 * at a time, each in a fresh worker of this process, with the host's RSS, JavaScript heap and
 * external memory sampled every 1 000 runs (after a full collection, the smallest of a few
 * samples: freed worker memory returns to the system lazily; soak-memory.mjs). Every worker
 * started and ended here is the host's own memory, so whatever a worker's teardown leaves behind shows up as
 * growth. The target: RSS at the end within 20 % of where it stood after the first 2 000 runs.
 * Beside it, the same soak of bare Workers (thread-soak-baseline.mjs): Node's own share.
 *
 * `node --expose-gc bench/thread-soak.mjs` (bench/run.mjs passes the flag);
 * `BENCH_SOAK_RUNS` changes the number of runs (20 000; 4 000 with BENCH_QUICK=1), and
 * `BENCH_SOAK_CHECKPOINT` how often memory is sampled.
 */
import { execFile } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { startOurs } from './ours.mjs'
import { soak } from './soak-memory.mjs'
import { fmt, machine, note, scale, table, target } from './stats.mjs'

const TOTAL = Number(process.env.BENCH_SOAK_RUNS) || scale(20_000, 4_000)
const CHECKPOINT = Number(process.env.BENCH_SOAK_CHECKPOINT) || 1_000
const WARM = Math.min(2_000, TOTAL / 2)
const LANES = 4
const LIMIT = 0.2

if (typeof globalThis.gc !== 'function') throw new Error('thread-soak: run with --expose-gc')

/**
 * Bare workers, as many and as many at a time, in a process of their own (so neither soak's
 * memory colours the other's): Node's own share of what worker teardown leaves.
 * `BENCH_SOAK_BASELINE=0` skips it.
 */
async function bareWorkerBaseline() {
  if (process.env.BENCH_SOAK_BASELINE === '0') return []
  const script = fileURLToPath(new URL('thread-soak-baseline.mjs', import.meta.url))
  const env = { ...process.env, BENCH_SOAK_RUNS: String(TOTAL), BENCH_SOAK_CHECKPOINT: String(CHECKPOINT), BENCH_SOAK_LANES: String(LANES) }
  const child = promisify(execFile)(process.execPath, ['--expose-gc', script], { env, maxBuffer: 16 * 2 ** 20 })
  child.child.stderr.pipe(process.stderr)
  const { stdout } = await child
  return stdout.trim().split('\n').map((line) => JSON.parse(line))
}

/** The programs, in turn: a value, output, a binding call with a payload, and a thrown error. */
const PROGRAMS = [
  { program: 'return 1', value: 1 },
  { program: "console.log('x'.repeat(200)); return 'printed'", value: 'printed' },
  { program: 'return (await tools.echo({ list: Array.from({ length: 64 }, (_, i) => i) })).list.length', value: 64 },
  { program: 'throw new Error("on purpose")', kind: 'exception' },
]
const tools = { global: 'tools', functions: { echo: async (value) => value } }

const ours = await startOurs({ isolation: 'thread' })
const rows = []
let wrong = 0
const began = performance.now()
await soak({ total: TOTAL, checkpoint: CHECKPOINT, lanes: LANES }, async (index) => {
  const { program, value, kind } = PROGRAMS[index % PROGRAMS.length]
  const result = await ours.run({ program, bindings: [tools] })
  if (kind ? result.error?.kind !== kind : result.value !== value) wrong++
}, (row) => {
  rows.push(row)
  // A line per checkpoint on stderr, so a soak cut short still tells where it stood.
  console.error(`thread-soak: ${row.runs} runs, RSS ${fmt(row.rss)} MiB (malloc ${fmt(row.malloc)} in ${row.arenas} arena heaps, other anonymous ${fmt(row.other)}, young generation ${fmt(row.young)}), ${row.threads} threads, heap ${fmt(row.heap)} of ${fmt(row.heapTotal)} MiB, external ${fmt(row.external)} MiB, ${fmt(row.runsPerSecond)} runs/s`)
})
await ours.dispose()
const soakSeconds = (performance.now() - began) / 1000

/** A soak's figures: where RSS stood after the warm-up and at the end, and its growth between. */
function growth(soak) {
  const warm = soak.find((row) => row.runs >= WARM) ?? soak[0]
  const last = soak.at(-1)
  return { warm, last, mib: last.rss - warm.rss, ratio: last.rss / warm.rss - 1 }
}

const percent = (ratio) => `${ratio >= 0 ? '+' : ''}${fmt(ratio * 100)} %`
const memoryHeader = ['runs', 'RSS', 'vs warm', 'malloc (arena heaps)', 'other anonymous', 'young generation', 'threads', 'heap used', 'heap total', 'external', 'runs/s']
const memoryRow = (row, warm) => [row.runs, fmt(row.rss), percent(row.rss / warm.rss - 1), row.malloc === undefined ? '-' : `${fmt(row.malloc)} (${row.arenas})`, row.other === undefined ? '-' : fmt(row.other), fmt(row.young), row.threads ?? '-', fmt(row.heap), fmt(row.heapTotal), fmt(row.external), fmt(row.runsPerSecond)]

const ourGrowth = growth(rows)
const { warm, last } = ourGrowth
console.log(`\n## The thread host's memory over ${TOTAL} one-shot runs\n\n${machine()}; ${LANES} runs at a time, ${fmt(soakSeconds)} s in all.`)
table(`Host memory after every ${CHECKPOINT} runs (MiB, after a full collection; "vs warm": against run ${warm.runs})`, memoryHeader, rows.map((row) => memoryRow(row, warm)))
target(`RSS after ${TOTAL} runs within ${LIMIT * 100} % of RSS after ${warm.runs}`, `${fmt(warm.rss)} -> ${fmt(last.rss)} MiB (${percent(ourGrowth.ratio)})`, last.rss <= warm.rss * (1 + LIMIT))
// The young generation can stand anywhere up to its limit at either sample (Node 20): judged
// without it too, so that its moment can neither hide growth nor invent it.
const beyondYoung = (row) => row.rss - row.young
target(`RSS less the host's young generation, the same comparison`, `${fmt(beyondYoung(warm))} -> ${fmt(beyondYoung(last))} MiB (${percent(beyondYoung(last) / beyondYoung(warm) - 1)})`, beyondYoung(last) <= beyondYoung(warm) * (1 + LIMIT))
note(`runs that ended with the wrong value or kind: ${wrong}; malloc: resident memory of glibc's arenas (the main one's [heap] and every 64 MiB-aligned arena heap, counted in parentheses), where worker threads allocate; other anonymous: the rest not backed by files (V8's heap pages, the host's young generation among them, thread stacks, large mmapped chunks); young generation: what V8 holds for the host isolate's new objects, sized by its allocation rate; threads: the process's, one per live worker (pooled spares included) beside Node's own, whose memory RSS counts. Each sample follows a full collection that gives back what V8 holds beyond need (Node 22 onwards; Node 20's V8 cannot be asked to from JavaScript, so there the young generation may stand anywhere up to its limit). MALLOC_ARENA_MAX in the environment bounds the arenas.`)
// After ours is printed and judged, so a soak cut short during the baseline has told the library's figures.
const baseline = await bareWorkerBaseline()
if (baseline.length > 0) {
  const bare = growth(baseline)
  table(`Baseline: bare Workers, the same options, no ptc-runtime code (MiB, after a full collection; "vs warm": against worker ${bare.warm.runs})`, memoryHeader, baseline.map((row) => memoryRow(row, bare.warm)))
  note(`RSS growth from run ${warm.runs} to ${TOTAL}: ptc-runtime ${fmt(ourGrowth.mib)} MiB (${percent(ourGrowth.ratio)}), bare Workers ${fmt(bare.mib)} MiB (${percent(bare.ratio)}); the library's own share is the difference, ${fmt(ourGrowth.mib - bare.mib)} MiB. malloc at the end: ${fmt(last.malloc)} against the bare Workers' ${fmt(bare.last.malloc)} MiB.`)
}
