/**
 * Table 1: one-shot latency, a fresh environment per run, for `return 1` and a 3-tool-call
 * program. Ours is measured end to end (`run(resolve(request))`, which resolves only after the
 * worker has exited); every peer is measured from "here is a program" to "here is its value".
 */
import { ONE_SHOT } from './programs.mjs'
import { childProcessRun, loadQuickJS, quickjsRun, spawnBareWorker, startIsolatedVm, vmRun } from './peers.mjs'
import { runExpecting, startOurs, startSandboxedIfWorking } from './ours.mjs'
import { fmt, interleave, machine, note, now, scale, summarize, table, target, times } from './stats.mjs'

const ROUNDS = scale(4, 2)
const FAST = scale(15, 6)
const SLOW = scale(8, 3)
const WARMUP = 2
/** A scenario whose last warm-up took longer than this gets SLOW samples per round, not FAST. */
const SLOW_MS = 25

const echo = async (value) => value
const EXPECTED = { 'return 1': 1, '3 tool calls': 3 }

async function timed(run) {
  const start = now()
  await run()
  return now() - start
}

async function latency() {
  console.log(`\n## One-shot latency (fresh environment per run)\n\n${machine()}; ${ROUNDS} interleaved rounds.`)
  const skipped = []
  const pooled = await startOurs({ poolSize: 1 })
  const cold = await startOurs({ poolSize: 0 })
  const sandboxed = await startSandboxedIfWorking({ poolSize: 1 })
  if (sandboxed.skipped) skipped.push(`ours, helper-process host: skipped — ${sandboxed.skipped}`)
  const qjs = await loadQuickJS()
  if (!qjs.available) skipped.push(`quickjs-emscripten: ${qjs.reason}`)
  const ivm = await startIsolatedVm()
  if (!ivm.available) skipped.push(`isolated-vm: ${ivm.reason}`)

  for (const [label, program] of Object.entries(ONE_SHOT)) {
    const expected = EXPECTED[label]
    let bare = await spawnBareWorker(echo)
    const scenarios = [
      { name: 'ptc-runtime, pool on (poolSize 1), thread host', slow: false, sample: () => timed(() => runExpecting(pooled, program, { echo }, expected)) },
      { name: 'ptc-runtime, pool off (poolSize 0), thread host', sample: () => timed(() => runExpecting(cold, program, { echo }, expected)) },
      ...(sandboxed.ours
        ? [{ name: 'ptc-runtime, pool on, helper-process host', sample: () => timed(() => runExpecting(sandboxed.ours, program, { echo }, expected)) }]
        : []),
      {
        name: 'bare pre-spawned Worker',
        slow: false, // the sample also spawns the next worker, outside the measured span
        async sample() {
          const sample = await bare.run(program)
          bare = await spawnBareWorker(echo)
          return sample
        },
      },
      { name: 'node:vm, new context', sample: () => timed(() => vmRun(program, echo)) },
      ...(qjs.available ? [{ name: `quickjs-emscripten ${qjs.version}, new runtime + context`, sample: () => timed(() => quickjsRun(program, echo)) }] : []),
      ...(ivm.available
        ? [{ name: `isolated-vm ${ivm.version}, new isolate + context`, sample: async () => (await ivm.request({ op: 'latency', program })).ms }]
        : []),
      { name: 'child_process.fork per run (until exit)', sample: () => childProcessRun(program, echo) },
    ]
    for (const scenario of scenarios) {
      for (let i = 1; i < WARMUP; i++) await scenario.sample()
      const start = now()
      await scenario.sample()
      scenario.slow ??= now() - start > SLOW_MS
    }
    const samples = await interleave(scenarios, { rounds: ROUNDS, per: (scenario) => (scenario.slow ? SLOW : FAST) })
    await bare.close()

    const stats = new Map()
    for (const [name, values] of samples) {
      if (name === 'bare pre-spawned Worker') {
        stats.set('bare pre-spawned Worker, post → result (floor, worker still alive)', summarize(values.map((v) => v.result)))
        stats.set('bare pre-spawned Worker, post → result → terminate → exit', summarize(values.map((v) => v.exit)))
      } else {
        stats.set(name, summarize(values))
      }
    }
    const vmMedian = stats.get('node:vm, new context').median
    table(
      `\`${label}\` (ms)`,
      ['engine', 'median', 'p95', 'n', 'vs node:vm'],
      [...stats].map(([name, s]) => [name, fmt(s.median), fmt(s.p95), s.n, times(s.median / vmMedian)]),
    )
    const ours = stats.get('ptc-runtime, pool on (poolSize 1), thread host')
    const child = stats.get('child_process.fork per run (until exit)')
    if (label === 'return 1') {
      target('pooled `return 1` ≤ 1.5x node:vm new context', times(ours.median / vmMedian), ours.median / vmMedian <= 1.5)
      target('pooled `return 1` ≥ 10x faster than a child process per run', times(child.median / ours.median), child.median / ours.median >= 10)
    } else {
      target('3-tool-call program, pooled, < 5 ms median', `${fmt(ours.median)} ms`, ours.median < 5)
    }
  }
  for (const line of skipped) note(line)
  await pooled.dispose()
  await cold.dispose()
  await sandboxed.dispose?.()
  await ivm.close?.()
}

await latency()
