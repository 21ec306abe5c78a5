// What a durable pause costs the host against a live pause of the same program: the peak growth
// of the host's heap while a program makes sequential calls with large arguments (a durable run
// journals them, within maxJournalBytes), and the longest the host's event loop is held while the
// run pauses (the durable one seals its journal into a token). Both rows run in this process, in
// interleaved rounds. A second table seals and resumes a token of about 30 MB (arguments of
// random text, which deflate does not shrink), and compares the host's longest event-loop delay
// (monitorEventLoopDelay) against the live pause and resume of the same program: sealing and
// opening run in the durable worker thread, so the durable rows should stay near the live ones.
// Run after `npm run build`: node --expose-gc bench/durable-journal.mjs
import { Context } from 'cordis'
import { WorkerPtcRuntime, defineToolGroup } from 'ptc-runtime'
import { loopDelayMonitor } from './stats.mjs'

const ARGUMENT_MB = 4
const ROUNDS = Number(process.env.ROUNDS ?? 3)
const MAX_JOURNAL_BYTES = 32 * 1024 * 1024

const tools = defineToolGroup({
  global: 'tools',
  tools: {
    take: { inputSchema: {}, run: async () => 'taken' },
    ask: { inputSchema: {}, needsApproval: true, run: async () => 'approved' },
  },
})

/** Heap growth (MB) at its peak and the longest event-loop gap (ms) while `body` runs. */
async function observe(body) {
  global.gc()
  const before = process.memoryUsage().heapUsed
  let peak = before
  let last = performance.now()
  let gap = 0
  const sampler = setInterval(() => {
    const now = performance.now()
    gap = Math.max(gap, now - last)
    last = now
    peak = Math.max(peak, process.memoryUsage().heapUsed)
  }, 1)
  const delay = await loopDelayMonitor(5)
  const result = await body()
  delay.disable()
  clearInterval(sampler)
  return { result, heapMb: (peak - before) / 2 ** 20, gapMs: gap, delayMs: delay.max / 1e6 }
}

// Held until the end: an ending runtime's helpers are unref'd, and the bench must not exit early.
const keepAlive = setInterval(() => {}, 1000)
const root = new Context()
const fiber = await root.plugin(WorkerPtcRuntime, { isolation: 'process', sandbox: 'none', durableKey: 'a bench key of at least thirty-two bytes', maxJournalBytes: MAX_JOURNAL_BYTES })
const runtime = root.ptcRuntime
const run = (calls, pause) => {
  const program = `const text = 'x'.repeat(${ARGUMENT_MB} * 1024 * 1024); for (let i = 0; i < ${calls}; i++) await tools.take({ i, text }); return await tools.ask({})`
  return runtime.run(runtime.resolve({ program, bindings: [tools.namespace], pause, timeoutMs: 300_000 }))
}
// A journal just under the budget (the durable run seals it), and a flood far over it (it fails).
const sealable = Math.floor(MAX_JOURNAL_BYTES / (ARGUMENT_MB * 2 ** 20 + 64)) - 1
const scenarios = [
  { name: `${sealable} calls of ${ARGUMENT_MB} MB, then a hold`, calls: sealable },
  { name: `40 calls of ${ARGUMENT_MB} MB (over maxJournalBytes when durable)`, calls: 40 },
]
const rows = []
for (const scenario of scenarios) {
  const samples = { live: [], durable: [] }
  for (let round = 0; round < ROUNDS; round++) {
    for (const pause of round % 2 === 0 ? ['live', 'durable'] : ['durable', 'live']) {
      const observed = await observe(() => run(scenario.calls, pause))
      const { result } = observed
      if (result.paused?.id && pause === 'live') await runtime.resume(result.paused.id, { approve: false })
      observed.outcome = result.paused ? `paused${result.paused.token ? ` (token ${(result.paused.token.length / 2 ** 10).toFixed(0)} KiB)` : ''}` : result.error?.kind
      samples[pause].push(observed)
    }
  }
  const median = (list, key) => list.map((item) => item[key]).sort((a, b) => a - b)[Math.floor(list.length / 2)]
  for (const pause of ['live', 'durable']) {
    rows.push({ scenario: scenario.name, pause, outcome: samples[pause][0].outcome, heapMb: median(samples[pause], 'heapMb'), gapMs: median(samples[pause], 'gapMs') })
  }
  const [live, durable] = rows.slice(-2)
  rows.push({ scenario: scenario.name, pause: 'durable − live', heapMb: durable.heapMb - live.heapMb, gapMs: durable.gapMs / Math.max(live.gapMs, 1), ratio: true })
}
await fiber.dispose()

// A token of about 30 MB: 8 calls of 3.75 MiB of random base64 text (a generator in the program,
// so the replay makes the same calls), under a maxJournalBytes of 40 MiB.
const BIG_CALLS = 8
const bigFiber = await root.plugin(WorkerPtcRuntime, { isolation: 'process', sandbox: 'none', durableKey: 'a bench key of at least thirty-two bytes', maxJournalBytes: 40 * 2 ** 20 })
const bigRuntime = root.ptcRuntime
const bigProgram = `const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/'
let seed = 12345
const random = (length) => { const chars = new Array(length); for (let i = 0; i < length; i++) { seed = (Math.imul(seed, 1103515245) + 12345) >>> 0; chars[i] = alphabet[seed >>> 26] } return chars.join('') }
for (let i = 0; i < ${BIG_CALLS}; i++) await tools.take({ i, text: random(3.75 * 1024 * 1024) })
return await tools.ask({})`
const big = { live: { pause: [], resume: [] }, durable: { pause: [], resume: [] } }
let tokenMb = 0
for (let round = 0; round < ROUNDS; round++) {
  for (const pause of round % 2 === 0 ? ['live', 'durable'] : ['durable', 'live']) {
    const paused = await observe(() => bigRuntime.run(bigRuntime.resolve({ program: bigProgram, bindings: [tools.namespace], pause, timeoutMs: 300_000 })))
    const { paused: held, error } = paused.result
    if (!held) throw new Error(`the ${pause} run did not pause: ${error?.message}`)
    if (held.token) tokenMb = held.token.length / 2 ** 20
    const resumed = await observe(() => bigRuntime.resume(held.token ?? held.id, { approve: true }, held.token ? { bindings: [tools.namespace] } : undefined))
    if (resumed.result.value !== 'approved') throw new Error(`the ${pause} resume did not finish: ${resumed.result.error?.message}`)
    big[pause].pause.push(paused.delayMs)
    big[pause].resume.push(resumed.delayMs)
  }
}
await bigFiber.dispose()
clearInterval(keepAlive)

console.log(`\n## Durable journal (median of ${ROUNDS} interleaved rounds; maxJournalBytes ${MAX_JOURNAL_BYTES / 2 ** 20} MiB)\n`)
console.log('| scenario | pause | outcome | host heap peak growth (MB) | longest event-loop gap (ms) |')
console.log('|---|---|---|---|---|')
for (const row of rows) {
  const gap = row.ratio ? `× ${row.gapMs.toFixed(2)}` : row.gapMs.toFixed(0)
  console.log(`| ${row.scenario} | ${row.pause} | ${row.outcome ?? ''} | ${row.heapMb.toFixed(1)} | ${gap} |`)
}
const flood = rows.filter((row) => row.scenario.startsWith('40 ') && row.ratio)[0]
const target = (MAX_JOURNAL_BYTES * 2) / 2 ** 20
console.log(`\nTarget: a durable flood grows the host heap by at most twice maxJournalBytes (${target} MB) more than the live run: ${flood.heapMb <= target ? 'PASS' : 'MISS'} (${flood.heapMb.toFixed(1)} MB).`)

const middle = (list) => [...list].sort((a, b) => a - b)[Math.floor(list.length / 2)]
console.log(`\n## A ${tokenMb.toFixed(1)} MB durable token: the host's longest event-loop delay (monitorEventLoopDelay, ms; median of ${ROUNDS} rounds)\n`)
console.log('| step | live | durable | durable / live |')
console.log('|---|---|---|---|')
const ratios = {}
for (const step of ['pause', 'resume']) {
  // A durable resume makes the recorded calls again (answered from the record): its baseline is
  // the live run that made them, not the live resume, which only answers the held call.
  const live = step === 'pause' ? middle(big.live.pause) : Math.max(middle(big.live.pause), middle(big.live.resume))
  const durable = middle(big.durable[step])
  ratios[step] = durable / Math.max(live, 1)
  console.log(`| ${step === 'pause' ? 'run until paused (durable: seals the token)' : 'resume to the end (durable: opens the token, replays its calls; live: the run that made them)'} | ${live.toFixed(0)} | ${durable.toFixed(0)} | × ${ratios[step].toFixed(2)} |`)
}
const worst = Math.max(ratios.pause, ratios.resume)
console.log(`\nTarget: sealing and opening a 30 MB token hold the host's event loop no longer than twice the live pause and resume of the same program: ${worst <= 2 ? 'PASS' : 'MISS'} (× ${worst.toFixed(2)}).`)
