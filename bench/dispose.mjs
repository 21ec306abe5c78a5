/**
 * Table: disposal at scale. Runtime disposal with many runs in flight (each must settle
 * promptly), and with many idle retained environments (all must be gone), on each host. The
 * host's event loop must stay responsive throughout: `monitorEventLoopDelay` records how long it
 * was blocked, and the thread host, which reads no helper's processes, is the reference.
 *
 * `node bench/run.mjs dispose`; `BENCH_DISPOSE_INFLIGHT` and `BENCH_DISPOSE_RETAINED` change
 * the counts (100 and 300; 20 and 40 with BENCH_QUICK=1), `BENCH_DISPOSE_HOSTS` the hosts.
 */
import { startOurs } from './ours.mjs'
import { fmt, loopDelayMonitor, machine, note, now, scale, settle, sleep, summarize, table, target, times } from './stats.mjs'

const IN_FLIGHT = Number(process.env.BENCH_DISPOSE_INFLIGHT) || scale(100, 20)
const RETAINED = Number(process.env.BENCH_DISPOSE_RETAINED) || scale(300, 40)
/** Environments started at once while the retained ones are made. */
const LANES = 8

const ALL_HOSTS = [
  { name: 'thread host', config: { isolation: 'thread' } },
  { name: 'process host (default)', config: { isolation: 'process' } },
  // No bubblewrap: no PID namespace, so the host finds the program's processes in /proc.
  { name: 'process host, no bubblewrap', config: { isolation: 'process', sandbox: { mode: 'danger-full-access', bwrapPath: '/nonexistent/bwrap' } } },
]
/** `BENCH_DISPOSE_HOSTS=process` measures the hosts whose names contain one of its words (the thread host stays, as the reference). */
const HOSTS = ALL_HOSTS.filter((host, index) => index === 0 || !process.env.BENCH_DISPOSE_HOSTS || process.env.BENCH_DISPOSE_HOSTS.split(',').some((word) => host.name.includes(word)))

/** Runs `during` while recording the event loop's delay; resolves its value and the longest block in ms. */
async function monitored(during) {
  const histogram = await loopDelayMonitor(1)
  try {
    const value = await during()
    return { value, maxDelayMs: histogram.max / 1e6 }
  } finally {
    histogram.disable()
  }
}

/**
 * `count` runs in flight, half spinning on the CPU (`while (true) {}`) and half waiting forever in
 * their programs, disposed at once: how long each takes to settle, and disposal to resolve.
 */
async function inFlight(host, count) {
  // The deployment's own pool: a spare started as runs end would be disposal's to wait for.
  const ours = await startOurs(host.config)
  let started = 0
  let allStarted
  const running = new Promise((resolve) => (allStarted = resolve))
  const tools = { started: async () => {
    if (++started === count) allStarted()
    return null
  } }
  const settled = []
  let begin
  const programs = ['await tools.started(); while (true) {}', 'await tools.started(); await new Promise(() => {})']
  const runs = Array.from({ length: count }, (_, index) =>
    ours.run({ program: programs[index % 2], bindings: [{ global: 'tools', functions: tools }], timeoutMs: null }).then((result) => {
      settled.push(now() - begin)
      return result
    }),
  )
  await running
  // The host's responsiveness while half the programs spin: the kernel must keep the host first.
  const { maxDelayMs: loadedDelayMs } = await monitored(() => sleep(1000))
  const { value: disposeMs, maxDelayMs } = await monitored(async () => {
    begin = now()
    await ours.dispose()
    return now() - begin
  })
  const results = await Promise.all(runs)
  const wrong = results.filter((result) => result.error?.kind !== "abort").length
  if (wrong > 0) console.error(JSON.stringify(results.find((result) => result.error?.kind !== "abort")))
  const settleMax = Math.max(...settled)
  return { settle: summarize(settled), settleMax, disposeMs, afterLastMs: disposeMs - settleMax, maxDelayMs, loadedDelayMs, wrong }
}

/** `count` state owners, each with a kept environment after one run, disposed at once. */
async function retained(host, count) {
  const ours = await startOurs({ ...host.config, retainState: true })
  let made = 0
  let failed = 0
  await Promise.all(
    Array.from({ length: LANES }, async () => {
      while (made < count) {
        made++
        const result = await ours.run({ program: 'globalThis.kept = 1; return 1', bindings: [], stateOwner: {} })
        if (result.error) failed++
      }
    }),
  )
  await settle({ minMs: 50, maxMs: 10_000 })
  const { value: disposeMs, maxDelayMs } = await monitored(async () => {
    const begin = now()
    await ours.dispose()
    return now() - begin
  })
  return { disposeMs, maxDelayMs, failed }
}

console.log(`\n## Disposal at scale\n\n${machine()}; ${IN_FLIGHT} runs in flight, ${RETAINED} idle retained environments.`)
const flights = []
for (const host of HOSTS) flights.push([host, await inFlight(host, IN_FLIGHT)])
const thread = flights[0][1]
table(
  `Disposing a runtime with ${IN_FLIGHT} runs in flight`,
  ['host', 'settle median ms', 'settle p95 ms', 'settle max ms', 'dispose ms', 'after last settle ms', 'vs thread', 'max event-loop delay ms', 'delay while spinning ms', 'not "abort"'],
  flights.map(([host, m]) => [host.name, fmt(m.settle.median), fmt(m.settle.p95), fmt(m.settleMax), fmt(m.disposeMs), fmt(m.afterLastMs), times(m.disposeMs / thread.disposeMs), fmt(m.maxDelayMs), fmt(m.loadedDelayMs), m.wrong]),
)
for (const [host, m] of flights) {
  target(`${host.name}: every in-flight run settles within 1 s of disposal`, `${fmt(m.settleMax)} ms`, m.settleMax < 1000)
  target(`${host.name}: disposal resolves within 1 s of its call`, `${fmt(m.disposeMs)} ms`, m.disposeMs < 1000)
  target(`${host.name}: disposal resolves within 1 s of the last run settling`, `${fmt(m.afterLastMs)} ms`, m.afterLastMs < 1000)
  if (host !== HOSTS[0]) target(`${host.name}: the event loop is never blocked over 50 ms`, `${fmt(m.maxDelayMs)} ms`, m.maxDelayMs < 50)
}

const kept = []
for (const host of HOSTS) kept.push([host, await retained(host, RETAINED)])
const threadKept = kept[0][1]
table(
  `Disposing a runtime with ${RETAINED} idle retained environments`,
  ['host', 'dispose ms', 'vs thread', 'max event-loop delay ms', 'failed setup runs'],
  kept.map(([host, m]) => [host.name, fmt(m.disposeMs), times(m.disposeMs / threadKept.disposeMs), fmt(m.maxDelayMs), m.failed]),
)
for (const [host, m] of kept.slice(1)) {
  target(`${host.name}: ${RETAINED} idle retained environments disposed in under 2 s`, `${fmt(m.disposeMs / 1000)} s`, m.disposeMs < 2_000)
  target(`${host.name}: the event loop is never blocked over 50 ms`, `${fmt(m.maxDelayMs)} ms`, m.maxDelayMs < 50)
}
note('settle: from the start of disposal to each run\'s result; after last settle: from the last result to disposal resolving; max event-loop delay: the longest the host\'s event loop was held during disposal (monitorEventLoopDelay, 1 ms resolution); delay while spinning: the same over one second before disposal, half the programs spinning.')
