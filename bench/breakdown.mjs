/**
 * Table 6: where a pooled run's time goes. The bench wraps two worker_threads methods the thread
 * host uses (it changes nothing else): `MessagePort#postMessage` stamps the moment the run
 * message leaves, `Worker#terminate` stamps the start and end of the worker's teardown. Phases:
 *
 *   resolve    `resolve(request)`: validation, cwd check
 *   prepare    `run()` up to the run message: checks, lowering (or cache hit), plan, attach
 *   execute    run message → terminate(): the worker runs the program, the result comes back
 *              and is decoded and settled
 *   teardown   terminate() → worker exited (a run resolves only once its worker is gone)
 *   return     exit → `run()` resolved
 *
 * A bare pre-spawned Worker running the same program, with the same stamps, is the floor. Runs
 * of a state owner (retainState) show the same program in a warm worker: the owner's first run
 * in its new environment, then later ones, which have no start-up and no teardown.
 */
import { MessagePort, Worker } from 'node:worker_threads'
import { ONE_SHOT } from './programs.mjs'
import { spawnBareWorker } from './peers.mjs'
import { startOurs } from './ours.mjs'
import { fmt, interleave, machine, now, scale, summarize, table } from './stats.mjs'

const ROUNDS = scale(3, 1)
const PER = scale(20, 8)

const stamps = {}
const terminate = Worker.prototype.terminate
Worker.prototype.terminate = function (...args) {
  stamps.terminate = now()
  return terminate.apply(this, args).then((code) => {
    stamps.exited = now()
    return code
  })
}
const postMessage = MessagePort.prototype.postMessage
MessagePort.prototype.postMessage = function (message, ...rest) {
  if (message?.type === 'run') stamps.posted = now()
  return postMessage.call(this, message, ...rest)
}

const echo = async (value) => value
const PHASES = ['resolve', 'prepare', 'execute', 'teardown', 'return', 'total']

async function breakdown() {
  console.log(`\n## Where a pooled run's time goes (ms)\n\n${machine()}; poolSize 1, thread host, ${ROUNDS} interleaved rounds.`)
  const ours = await startOurs({ poolSize: 1 })
  const retained = await startOurs({ poolSize: 1, retainState: true })
  const bindings = [{ global: 'tools', functions: { echo } }]
  let bare = await spawnBareWorker(echo)
  let unique = 0

  const phased = (program, expected, runtime = ours.runtime, owner = () => undefined) => async () => {
    for (const key in stamps) delete stamps[key]
    const start = now()
    const spec = runtime.resolve({ program: program(), bindings, stateOwner: owner() })
    const resolved = now()
    const result = await runtime.run(spec)
    const end = now()
    if (result.error || result.value !== expected) throw new Error(`run failed: ${JSON.stringify(result)}`)
    const torn = stamps.terminate !== undefined
    return {
      resolve: resolved - start,
      prepare: stamps.posted - resolved,
      execute: (torn ? stamps.terminate : end) - stamps.posted,
      teardown: torn ? stamps.exited - stamps.terminate : 0,
      return: torn ? end - stamps.exited : 0,
      total: end - start,
    }
  }
  // Each sample of the retained rows takes a new owner through two runs and releases it.
  let owner
  const retainedRun = (first) => {
    const run = phased(() => 'return 1', 1, retained.runtime, () => owner)
    return async () => {
      if (first) {
        if (owner) await retained.runtime.release(owner)
        owner = {}
      }
      return run()
    }
  }
  const scenarios = [
    ...Object.entries(ONE_SHOT).map(([label, program]) => ({ name: `\`${label}\``, sample: phased(() => program, label === 'return 1' ? 1 : 3) })),
    { name: '`return 1`, new text each run (lowering cache miss)', sample: phased(() => `return 1 // ${++unique}`, 1) },
    { name: '`return 1`, state owner, 1st run (retained environment)', sample: retainedRun(true) },
    { name: '`return 1`, state owner, later runs (warm worker, no teardown)', sample: retainedRun(false) },
    {
      name: 'bare pre-spawned Worker, `return 1` (floor)',
      async sample() {
        const { result, exit } = await bare.run('return 1')
        bare = await spawnBareWorker(echo)
        return { resolve: 0, prepare: 0, execute: result, teardown: exit - result, return: 0, total: exit }
      },
    },
  ]
  for (const scenario of scenarios) for (let i = 0; i < 2; i++) await scenario.sample()
  const samples = await interleave(scenarios, { rounds: ROUNDS, per: PER })
  table(
    'Median per phase (p95 of the total in the last column)',
    ['run', ...PHASES.map((phase) => `${phase}`), 'total p95'],
    [...samples].map(([name, values]) => [
      name,
      ...PHASES.map((phase) => fmt(summarize(values.map((value) => value[phase])).median)),
      fmt(summarize(values.map((value) => value.total)).p95),
    ]),
  )
  await bare.close()
  await ours.dispose()
  await retained.dispose()
}

await breakdown()
