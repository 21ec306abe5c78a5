/**
 * Table 2: binding round trip. The program awaits `tools.echo({ i })` N times in sequence, then
 * N times in `Promise.all` batches of 100. The host stamps every invocation, so a per-call cost
 * is the gap between two invocations (or between two batches, divided by 100): one full round
 * trip, measured identically for every engine. On the process host each call also crosses the
 * helper's channel (a socket) both ways.
 */
import { batchedCalls, sequentialCalls, stampingEcho } from './programs.mjs'
import { loadQuickJS, messagePortLoop, quickjsRun, startIsolatedVm, vmRun } from './peers.mjs'
import { runExpecting, startOurs } from './ours.mjs'
import { fmt, interleave, machine, note, scale, summarize, table, target, times } from './stats.mjs'

const N = 10_000
const WIDTH = 100
const ROUNDS = scale(3, 1)

async function bindings() {
  console.log(`\n## Binding round trip (µs per call)\n\n${machine()}; ${N} calls per loop, ${ROUNDS} interleaved rounds.`)
  const skipped = []
  // A loop of 10 000 calls is past the default maxCalls (1 000) of one run.
  const ours = await startOurs({ isolation: 'thread', poolSize: 1, maxCalls: 100_000 })
  const processHost = await startOurs({ isolation: 'process', poolSize: 1, maxCalls: 100_000 })
  const qjs = await loadQuickJS()
  if (!qjs.available) skipped.push(`quickjs-emscripten: ${qjs.reason}`)
  const ivm = await startIsolatedVm()
  if (!ivm.available) skipped.push(`isolated-vm: ${ivm.reason}`)

  const modes = [
    { label: `${N} sequential calls`, width: 1, program: sequentialCalls(N) },
    { label: `${N} calls as ${N / WIDTH} \`Promise.all\` batches of ${WIDTH} (amortized per call)`, width: WIDTH, program: batchedCalls(N, WIDTH) },
  ]
  for (const { label, width, program } of modes) {
    const loop = (body) => async () => {
      const recorder = stampingEcho(N)
      await body(recorder)
      return recorder.gaps(width)
    }
    const scenarios = [
      { name: 'ptc-runtime (thread host)', sample: loop((recorder) => runExpecting(ours, program, { echo: recorder.echo }, N)) },
      { name: 'ptc-runtime (process host, default)', sample: loop((recorder) => runExpecting(processHost, program, { echo: recorder.echo }, N)) },
      { name: 'bare MessagePort round trip (floor)', sample: loop((recorder) => messagePortLoop(N, width, recorder.echo)) },
      ...(ivm.available
        ? [{ name: `isolated-vm ${ivm.version}, Reference.apply (promise)`, sample: async () => (await ivm.request({ op: 'bindings', program, n: N, width })).gaps }]
        : []),
      ...(qjs.available ? [{ name: `quickjs-emscripten ${qjs.version}, host promise`, sample: loop((recorder) => quickjsRun(program, recorder.echo)) }] : []),
      { name: 'node:vm, structuredClone both ways (no boundary)', sample: loop((recorder) => vmRun(program, recorder.echo)) },
    ]
    const samples = await interleave(scenarios, { rounds: ROUNDS, per: 1 })
    const stats = new Map([...samples].map(([name, values]) => [name, summarize(values)]))
    const floor = stats.get('bare MessagePort round trip (floor)').median
    table(
      label,
      ['engine', 'median µs', 'p95 µs', 'vs MessagePort'],
      [...stats].map(([name, s]) => [name, fmt(s.median), fmt(s.p95), times(s.median / floor)]),
    )
    if (width === 1) {
      const ratio = stats.get('ptc-runtime (thread host)').median / floor
      target('thread host: binding round trip ≤ 1.3x a bare MessagePort round trip', times(ratio), ratio <= 1.3)
    }
  }
  for (const line of skipped) note(line)
  await ours.dispose()
  await processHost.dispose()
  await ivm.close?.()
}

await bindings()
