/**
 * Table: the thread host's memory per run. 20 000 one-shot runs on `isolation: 'thread'`, a few
 * at a time, each in a fresh worker of this process, with the host's RSS, JavaScript heap and
 * external memory sampled every 1 000 runs (after a full collection, the smallest of a few
 * samples: freed worker memory returns to the system lazily). Every worker started and ended
 * here is the host's own memory, so whatever a worker's teardown leaves behind shows up as
 * growth. The target: RSS at the end within 20 % of where it stood after the first 2 000 runs.
 *
 * `node --expose-gc bench/thread-soak.mjs` (bench/run.mjs passes the flag);
 * `BENCH_SOAK_RUNS` changes the number of runs (20 000; 4 000 with BENCH_QUICK=1), and
 * `BENCH_SOAK_CHECKPOINT` how often memory is sampled.
 */
import { readFileSync } from 'node:fs'
import { setTimeout as sleep } from 'node:timers/promises'
import { startOurs } from './ours.mjs'
import { fmt, machine, note, scale, table, target } from './stats.mjs'

const TOTAL = Number(process.env.BENCH_SOAK_RUNS) || scale(20_000, 4_000)
const CHECKPOINT = Number(process.env.BENCH_SOAK_CHECKPOINT) || 1_000
const WARM = Math.min(2_000, TOTAL / 2)
const LANES = 4
const LIMIT = 0.2
const MIB = 2 ** 20

if (typeof globalThis.gc !== 'function') throw new Error('thread-soak: run with --expose-gc')

/** glibc's malloc arenas other than the main one are heaps of their own, each aligned to 64 MiB. */
const ARENA_ALIGNMENT = 64 * MIB

/**
 * Resident anonymous memory by where it comes from, in MiB, from /proc/self/smaps: malloc's
 * (the main arena's `[heap]` and the other arenas' heaps, which threads allocate from, a worker's
 * thread included) and the rest (V8's heap pages, thread stacks, large mmapped chunks). Empty off Linux.
 */
function residentBySource() {
  let text
  try {
    text = readFileSync('/proc/self/smaps', 'utf8')
  } catch {
    return {}
  }
  const resident = { malloc: 0, arenas: 0, other: 0 }
  let kind
  for (const line of text.split('\n')) {
    const mapping = /^([0-9a-f]+)-[0-9a-f]+ \S+ \S+ \S+ \d+\s*(.*)$/.exec(line)
    if (mapping) {
      const [, start, path] = mapping
      const arena = !path && Number.parseInt(start, 16) % ARENA_ALIGNMENT === 0
      if (arena) resident.arenas++
      kind = path === '[heap]' || arena ? 'malloc' : path ? undefined : 'other'
      continue
    }
    const rss = kind && /^Rss:\s+(\d+) kB/.exec(line)
    if (rss) resident[kind] += Number(rss[1]) / 1024
  }
  return resident
}

/** What the host holds between runs, in MiB: the smallest RSS of a few samples after collections. */
async function settledMemory() {
  let best
  for (let sample = 0; sample < 5; sample++) {
    globalThis.gc()
    await sleep(40)
    const usage = process.memoryUsage()
    if (!best || usage.rss < best.rss) best = usage
  }
  const { malloc, other, arenas } = residentBySource()
  return { rss: best.rss / MIB, heap: best.heapUsed / MIB, heapTotal: best.heapTotal / MIB, external: best.external / MIB, buffers: best.arrayBuffers / MIB, malloc, other, arenas }
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
let done = 0
let wrong = 0
const began = performance.now()
while (done < TOTAL) {
  const before = done
  const until = Math.min(TOTAL, done + CHECKPOINT)
  const lapStart = performance.now()
  await Promise.all(
    Array.from({ length: LANES }, async () => {
      while (done < until) {
        const { program, value, kind } = PROGRAMS[done++ % PROGRAMS.length]
        const result = await ours.run({ program, bindings: [tools] })
        if (kind ? result.error?.kind !== kind : result.value !== value) wrong++
      }
    }),
  )
  const lapMs = performance.now() - lapStart
  const row = { runs: done, ...(await settledMemory()), runsPerSecond: (done - before) / (lapMs / 1000) }
  rows.push(row)
  // A line per checkpoint on stderr, so a soak cut short still tells where it stood.
  console.error(`thread-soak: ${row.runs} runs, RSS ${fmt(row.rss)} MiB (malloc ${fmt(row.malloc)} in ${row.arenas} arena heaps, other anonymous ${fmt(row.other)}), heap ${fmt(row.heap)} of ${fmt(row.heapTotal)} MiB, external ${fmt(row.external)} MiB, ${fmt(row.runsPerSecond)} runs/s`)
}
await ours.dispose()

const warm = rows.find((row) => row.runs >= WARM) ?? rows[0]
const last = rows.at(-1)
console.log(`\n## The thread host's memory over ${TOTAL} one-shot runs\n\n${machine()}; ${LANES} runs at a time, ${fmt((performance.now() - began) / 1000)} s in all.`)
table(
  `Host memory after every ${CHECKPOINT} runs (MiB, after a full collection)`,
  ['runs', 'RSS', `vs run ${warm.runs}`, 'malloc (arena heaps)', 'other anonymous', 'heap used', 'heap total', 'external', 'array buffers', 'runs/s'],
  rows.map((row) => [row.runs, fmt(row.rss), `${row.rss >= warm.rss ? '+' : ''}${fmt(((row.rss - warm.rss) / warm.rss) * 100)} %`, row.malloc === undefined ? '-' : `${fmt(row.malloc)} (${row.arenas})`, row.other === undefined ? '-' : fmt(row.other), fmt(row.heap), fmt(row.heapTotal), fmt(row.external), fmt(row.buffers), fmt(row.runsPerSecond)]),
)
target(`RSS after ${TOTAL} runs within ${LIMIT * 100} % of RSS after ${warm.runs}`, `${fmt(warm.rss)} -> ${fmt(last.rss)} MiB`, last.rss <= warm.rss * (1 + LIMIT))
note(`runs that ended with the wrong value or kind: ${wrong}; malloc: resident memory of glibc's arenas (the main one's [heap] and every 64 MiB-aligned arena heap, counted in parentheses), where worker threads allocate; other anonymous: the rest not backed by files (V8's heap pages, thread stacks, large mmapped chunks). MALLOC_ARENA_MAX=2 in the environment bounds the arenas.`)
