/**
 * `npm run bench`: every table, each in its own Node process so one table's heap, JIT state and
 * leftover workers cannot colour the next. `node bench/run.mjs latency bindings` runs a subset;
 * `BENCH_QUICK=1` makes a smoke run of about a minute. Targets are printed as PASS/MISS and never
 * fail the process; only a crashed table does.
 */
import { spawnSync } from 'node:child_process'
import { cpSync, rmSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { QUICK, fmt, machine, noiseProbe } from './stats.mjs'

const TABLES = {
  latency: [],
  breakdown: [],
  bindings: [],
  results: [],
  throughput: [],
  memory: [],
  dispose: [],
  transform: ['--expose-gc'],
  tiers: [],
  frames: ['--expose-gc'],
  'thread-soak': ['--expose-gc'],
  start: [],
  pool: [],
  python: [],
}

const chosen = process.argv.slice(2)
for (const name of chosen) {
  if (!(name in TABLES)) {
    console.error(`unknown table "${name}"; choose from: ${Object.keys(TABLES).join(', ')}`)
    process.exit(2)
  }
}

const started = performance.now()
const probes = Array.from({ length: 5 }, noiseProbe).sort((a, b) => a - b)
console.log(`# ptc-runtime bench${QUICK ? ' (BENCH_QUICK=1: smoke run, noisy numbers)' : ''}\n`)
console.log(`${machine()}; noise probe ${fmt(probes[2])} ms (about 14 ms on an idle machine here).`)
console.log('Ratios compare rows measured in the same process, in interleaved rounds; absolute numbers depend on the machine.')

// The tables run a snapshot of dist/, so a rebuild while the bench runs (a watcher, another
// checkout's build) cannot pull the worker file from under a run. Bare imports in the snapshot
// still resolve through this package's node_modules.
const snapshot = fileURLToPath(new URL(`../node_modules/.cache/ptc-bench/dist-${process.pid}/`, import.meta.url))
cpSync(fileURLToPath(new URL('../dist/', import.meta.url)), snapshot, { recursive: true })
process.on('exit', () => rmSync(snapshot, { recursive: true, force: true }))
const env = { ...process.env, PTC_BENCH_DIST: `${snapshot}index.js` }

let failed = 0
for (const name of chosen.length > 0 ? chosen : Object.keys(TABLES)) {
  const file = fileURLToPath(new URL(`./${name}.mjs`, import.meta.url))
  const { status, signal } = spawnSync(process.execPath, [...TABLES[name], file], { stdio: 'inherit', env })
  if (status !== 0) {
    failed++
    console.log(`\n(table "${name}" crashed: ${signal ?? `exit code ${status}`})`)
  }
}
console.log(`\nbench finished in ${fmt((performance.now() - started) / 1000)} s`)
process.exitCode = failed > 0 ? 1 : 0
