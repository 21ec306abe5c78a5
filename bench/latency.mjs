/**
 * Table 1: latency on both hosts side by side. One-shot runs (a fresh environment per run) for
 * `return 1` and a 3-tool-call program: ours is measured end to end (`run(resolve(request))`,
 * which resolves only after the environment is gone: the worker exited, or on the process host
 * the helper process too); every peer is measured from "here is a program" to "here is its
 * value". Then retained runs (`retainState` + `stateOwner`): an owner's later runs in its warm
 * environment, and its first run.
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

/** Warm-up, then interleaved rounds; the scenario's name → its summary. */
async function measure(scenarios) {
  for (const scenario of scenarios) {
    for (let i = 1; i < WARMUP; i++) await scenario.sample()
    const start = now()
    await scenario.sample()
    scenario.slow ??= now() - start > SLOW_MS
  }
  return interleave(scenarios, { rounds: ROUNDS, per: (scenario) => (scenario.slow ? SLOW : FAST) })
}

const THREAD_POOLED = 'ptc-runtime, thread host, pool on (poolSize 1)'
const PROCESS_POOLED = 'ptc-runtime, process host (default), pool on (poolSize 1)'
/** The process host as it was before confinement became the default: what safety costs is the difference. */
const UNCONFINED_POOLED = 'ptc-runtime, process host, sandbox: none, pool on (poolSize 1)'
const CHILD = 'child_process.fork per run (until exit)'

async function oneShot() {
  console.log(`\n## One-shot latency (fresh environment per run)\n\n${machine()}; ${ROUNDS} interleaved rounds.`)
  const skipped = []
  const hosts = {
    [THREAD_POOLED]: await startOurs({ isolation: 'thread', poolSize: 1 }),
    'ptc-runtime, thread host, pool off (poolSize 0)': await startOurs({ isolation: 'thread', poolSize: 0 }),
    [PROCESS_POOLED]: await startOurs({ isolation: 'process', poolSize: 1 }),
    'ptc-runtime, process host (default), pool off (poolSize 0)': await startOurs({ isolation: 'process', poolSize: 0 }),
    [UNCONFINED_POOLED]: await startOurs({ isolation: 'process', poolSize: 1, sandbox: 'none' }),
    'ptc-runtime, process host, sandbox: none, pool off (poolSize 0)': await startOurs({ isolation: 'process', poolSize: 0, sandbox: 'none' }),
  }
  const sandboxed = await startSandboxedIfWorking({ poolSize: 1 })
  if (sandboxed.skipped) skipped.push(`ptc-runtime, process host under a sandbox policy: skipped — ${sandboxed.skipped}`)
  else hosts['ptc-runtime, process host under a sandbox policy (bubblewrap), pool on'] = sandboxed.ours
  const qjs = await loadQuickJS()
  if (!qjs.available) skipped.push(`quickjs-emscripten: ${qjs.reason}`)
  const ivm = await startIsolatedVm()
  if (!ivm.available) skipped.push(`isolated-vm: ${ivm.reason}`)

  for (const [label, program] of Object.entries(ONE_SHOT)) {
    const expected = EXPECTED[label]
    let bare = await spawnBareWorker(echo)
    const scenarios = [
      ...Object.entries(hosts).map(([name, ours]) => ({
        name,
        slow: name.includes('pool on') ? false : undefined,
        sample: () => timed(() => runExpecting(ours, program, { echo }, expected)),
      })),
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
      { name: CHILD, sample: () => childProcessRun(program, echo) },
    ]
    const samples = await measure(scenarios)
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
    const thread = stats.get(THREAD_POOLED)
    const processHost = stats.get(PROCESS_POOLED)
    table(
      `\`${label}\` (ms)`,
      ['engine', 'median', 'p95', 'n', 'vs node:vm', 'vs thread host, pool on'],
      [...stats].map(([name, s]) => [name, fmt(s.median), fmt(s.p95), s.n, times(s.median / vmMedian), times(s.median / thread.median)]),
    )
    const child = stats.get(CHILD)
    const ratio = processHost.median / thread.median
    note(`\`${label}\`: the confined default costs ${times(processHost.median / stats.get(UNCONFINED_POOLED).median)} the unconfined process host (sandbox: 'none'), pooled`)
    if (label === 'return 1') {
      target('thread host, pooled `return 1` ≤ 1.5x node:vm new context', times(thread.median / vmMedian), thread.median / vmMedian <= 1.5)
      target('process host, pooled `return 1` ≤ 1.2x the thread host\'s', times(ratio), ratio <= 1.2)
      target(
        'process host, pooled `return 1` ≥ 5x faster than a child process per run (the pool takes the process start off the run)',
        times(child.median / processHost.median),
        child.median / processHost.median >= 5,
      )
    } else {
      target('thread host, 3-tool-call program, pooled, < 5 ms median', `${fmt(thread.median)} ms`, thread.median < 5)
      target('process host, 3-tool-call program, pooled, ≤ 2x the thread host\'s', times(ratio), ratio <= 2)
    }
  }
  for (const line of skipped) note(line)
  for (const ours of Object.values(hosts)) await ours.dispose()
  await sandboxed.dispose?.()
  await ivm.close?.()
}

/**
 * Retained runs: each host keeps one warm environment per state owner. "Later runs" reuse one
 * owner's environment; each "1st run" sample releases the previous owner first (outside the
 * measured span), so it includes taking a new environment for the new owner.
 */
async function retained() {
  console.log(`\n## Retained runs (retainState + stateOwner, poolSize 1)\n\n${machine()}; ${ROUNDS} interleaved rounds.`)
  const scenarios = []
  const runtimes = []
  const hostConfigs = {
    'thread host': { isolation: 'thread' },
    'process host (default)': { isolation: 'process' },
    'process host, sandbox: none': { isolation: 'process', sandbox: 'none' },
  }
  for (const [host, config] of Object.entries(hostConfigs)) {
    const ours = await startOurs({ ...config, poolSize: 1, retainState: true })
    runtimes.push(ours)
    const warm = {}
    for (const [label, program] of Object.entries(ONE_SHOT)) {
      scenarios.push({
        name: `${host}, \`${label}\`, later runs`,
        slow: false,
        sample: () => timed(() => expect(ours.run({ program, bindings: [{ global: 'tools', functions: { echo } }], stateOwner: warm }), EXPECTED[label])),
      })
    }
    let owner
    scenarios.push({
      name: `${host}, \`return 1\`, an owner's 1st run`,
      async sample() {
        if (owner) await ours.runtime.release(owner)
        owner = {}
        return timed(() => expect(ours.run({ program: 'return 1', bindings: [], stateOwner: owner }), 1))
      },
    })
  }
  const samples = await measure(scenarios)
  const stats = new Map([...samples].map(([name, values]) => [name, summarize(values)]))
  const threadOf = (name) => stats.get(name.replace(/process host( \(default\)|, sandbox: none)/, 'thread host'))
  table(
    'Retained runs (ms)',
    ['run', 'median', 'p95', 'n', 'vs the thread host'],
    [...stats].map(([name, s]) => [name, fmt(s.median), fmt(s.p95), s.n, times(s.median / threadOf(name).median)]),
  )
  const later = stats.get('process host (default), `return 1`, later runs').median / stats.get('thread host, `return 1`, later runs').median
  target('process host, retained `return 1` (later runs) ≤ 1.5x the thread host\'s', times(later), later <= 1.5)
  const confinement = stats.get('process host (default), `return 1`, an owner\'s 1st run').median / stats.get('process host, sandbox: none, `return 1`, an owner\'s 1st run').median
  note(`confinement by default: an owner's 1st run costs ${times(confinement)} the unconfined process host's (a bubblewrap start per environment)`)
  for (const ours of runtimes) await ours.dispose()
}

async function expect(running, expected) {
  const result = await running
  if (result.error || result.value !== expected) throw new Error(`ptc-runtime run failed: ${JSON.stringify(result.error ?? result.value)}`)
}

await oneShot()
await retained()
