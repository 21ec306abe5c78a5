/**
 * `npm run soak`: 10 000 runs on the in-process worker host, one runtime per program format,
 * mixing the hostile corpus (about one run in seven, each with its health follow-up) with
 * normal programs (one-shot, and retained state owners in the repl formats), six at a time.
 *
 * Every 1 000 runs it drains the runs in flight, collects garbage and prints runs/s and RSS.
 * It exits non-zero when RSS at a later checkpoint exceeds the first checkpoint's by more than
 * 10 %, when any run ends with the wrong kind or value, or when runtimes leave threads or
 * child processes behind after disposal. `PTC_SOAK_RUNS` changes the number of runs.
 *
 * It runs a snapshot of dist/, so a rebuild during the soak cannot pull the worker file from
 * under a run. Start it with --expose-gc (the npm script does).
 */
import { cpSync, rmSync } from 'node:fs'
import { setTimeout as sleep } from 'node:timers/promises'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { Context } from 'cordis'
import { childProcesses, threadCount } from '../helpers/processes.mjs'
import { CORPUS_CONFIG, FORMATS, TOOLS, knownBug, loadCorpus, retains, runCase } from '../hostile/corpus.mjs'

const TOTAL = Number(process.env.PTC_SOAK_RUNS ?? 10_000)
const CHECKPOINT = 1000
const CONCURRENCY = 6
const HOSTILE_EVERY = 7
const RSS_GROWTH_LIMIT = 0.1

const snapshot = fileURLToPath(new URL(`../../node_modules/.cache/ptc-soak/dist-${process.pid}/`, import.meta.url))
cpSync(fileURLToPath(new URL('../../dist/', import.meta.url)), snapshot, { recursive: true })
process.on('exit', () => rmSync(snapshot, { recursive: true, force: true }))
const { WorkerPtcRuntime } = await import(pathToFileURL(`${snapshot}index.js`).href)

/** Normal programs: source per format family, and the value each must complete with. */
const NORMAL = [
  { body: 'let total = 0\nfor (let i = 1; i <= 100; i++) total += i\n/* completion */ total', value: 5050 },
  { body: "console.log('hello from the soak')\n/* completion */ 'printed'", value: 'printed', output: 'hello from the soak\n' },
  { body: "const echoed = await tools.echo({ list: [1, 2, 3], nested: { ok: true } })\n/* completion */ echoed", value: { list: [1, 2, 3], nested: { ok: true } } },
  { body: '/* completion */ await Promise.all([tools.delay(5), tools.delay(1), tools.echo(3)])', value: [5, 1, 3] },
  { body: "class Point { constructor(x, y) { this.x = x; this.y = y } sum() { return this.x + this.y } }\n/* completion */ new Point(2, 3).sum()", value: 5 },
  { body: "const words = 'the quick brown fox'.split(' ').map((w) => w.toUpperCase())\n/* completion */ words.join('-')", value: 'THE-QUICK-BROWN-FOX' },
  { body: "let caught\ntry { await tools.fail('expected') } catch (error) { caught = error.message }\n/* completion */ caught", value: 'expected' },
  { body: "const { a, b: [c = 4] = [] } = { a: 1 }\n/* completion */ ({ a, c })", value: { a: 1, c: 4 } },
  { body: "const rows = Array.from({ length: 50 }, (_, i) => ({ id: i, even: i % 2 === 0 }))\n/* completion */ rows.filter((row) => row.even).length", value: 25 },
]

function textOf(program, format) {
  return program.body.replace(/^\/\* completion \*\/ /gm, format === 'function-body' ? 'return ' : ';')
}

function rssMb() {
  return process.memoryUsage().rss / 2 ** 20
}

/**
 * RSS between runs, in the same state at every checkpoint: retained owners released, garbage
 * collected, the smallest of a few samples (freed worker memory returns to the system lazily).
 */
async function settledRss() {
  for (const [format, slot] of owners) {
    await runtimes.get(format).runtime.release(slot.owner)
    slot.owner = {}
  }
  let rss = Number.POSITIVE_INFINITY
  for (let i = 0; i < 5; i++) {
    globalThis.gc?.()
    await sleep(200)
    rss = Math.min(rss, rssMb())
  }
  return { rss, heap: process.memoryUsage().heapTotal / 2 ** 20 }
}

const corpus = loadCorpus()
const hostile = FORMATS.flatMap((format) =>
  corpus.filter((program) => program.formats.includes(format) && program.hosts.includes('thread') && !knownBug(program, 'thread', format))
    .map((program) => ({ format, program })))

// Wake libuv's thread pool and start one worker first: both create threads lazily, once per
// process, which would otherwise count as left behind.
await Promise.all(Array.from({ length: 8 }, () => import('node:fs/promises').then((fs) => fs.stat('/'))))
const { Worker } = await import('node:worker_threads')
await new Promise((resolve) => new Worker('', { eval: true }).once('exit', resolve))
const threadsBefore = threadCount()
const runtimes = new Map()
for (const format of FORMATS) {
  const root = new Context()
  await root.plugin(WorkerPtcRuntime, { ...CORPUS_CONFIG, isolation: 'thread', programFormat: format })
  runtimes.set(format, { root, runtime: root.ptcRuntime })
}

/** Retained owners for normal programs: each lives for a few runs, then is released. */
const owners = new Map(FORMATS.filter(retains).map((format) => [format, { owner: {}, runs: 0 }]))

const failures = []
/** Records a wrong run; the first ones are printed at once, so a long soak shows trouble early. */
function wrongRun(text) {
  failures.push(text)
  if (failures.length <= 10) console.log(`  wrong: ${text.replace(/\n/g, ' ').slice(0, 300)}`)
}
let hostileRuns = 0
let normalRuns = 0

async function normalRun(index) {
  const format = FORMATS[index % FORMATS.length]
  const program = NORMAL[Math.floor(index / FORMATS.length) % NORMAL.length]
  const { runtime } = runtimes.get(format)
  const slot = owners.get(format)
  const owner = slot && index % 3 === 0 ? slot.owner : undefined
  const result = await runtime.run(runtime.resolve({ program: textOf(program, format), bindings: [TOOLS], ...(owner ? { stateOwner: owner } : {}) }))
  normalRuns++
  const text = result.output.map((entry) => entry.text ?? '').join('')
  const wrong = result.error
    ? `${result.error.kind}: ${result.error.message.slice(0, 200)}`
    : JSON.stringify(result.value) !== JSON.stringify(program.value)
      ? `value ${JSON.stringify(result.value)?.slice(0, 200)}`
      : program.output !== undefined && !text.endsWith(program.output) ? `output ${JSON.stringify(text.slice(0, 200))}` : undefined
  if (wrong) wrongRun(`normal program ${index} (${format}${owner ? ', retained' : ''}): ${wrong}`)
  if (owner && ++slot.runs % 20 === 0) {
    slot.owner = {}
    await runtime.release(owner)
  }
}

async function hostileRun(index) {
  const { format, program } = hostile[Math.floor(index / HOSTILE_EVERY) % hostile.length]
  const { problems } = await runCase(runtimes.get(format).runtime, { host: 'thread', format, program })
  hostileRuns++
  for (const problem of problems) wrongRun(`${program.name} (${format}): ${problem}`)
}

function runAt(index) {
  return index % HOSTILE_EVERY === 0 ? hostileRun(index) : normalRun(index)
}

console.log(`# ptc-runtime soak: ${TOTAL} runs, ${CONCURRENCY} at a time, one hostile corpus case in ${HOSTILE_EVERY}`)
console.log(`# ${hostile.length} hostile (program, format) cases on the thread host, ${NORMAL.length} normal programs, formats ${FORMATS.join(', ')}`)
console.log('runs   runs/s (block)   RSS MB   heap MB   RSS vs first checkpoint')

const started = performance.now()
let blockStarted = started
let firstRss
let worstGrowth = 0
let next = 0
for (let done = 0; done < TOTAL; ) {
  const blockEnd = Math.min(done + CHECKPOINT, TOTAL)
  // A checkpoint drains the runs in flight, so RSS is measured between runs, not during them.
  await Promise.all(Array.from({ length: CONCURRENCY }, async () => {
    while (next < blockEnd) await runAt(next++)
  }))
  done = blockEnd
  const rate = ((blockEnd % CHECKPOINT || CHECKPOINT) / (performance.now() - blockStarted)) * 1000
  const { rss, heap } = await settledRss()
  blockStarted = performance.now()
  firstRss ??= rss
  const growth = rss / firstRss - 1
  if (done > CHECKPOINT) worstGrowth = Math.max(worstGrowth, growth)
  const versus = done === CHECKPOINT ? 'baseline' : `${growth >= 0 ? '+' : ''}${(growth * 100).toFixed(1)} %`
  console.log(`${String(done).padEnd(6)} ${rate.toFixed(1).padStart(8)}         ${rss.toFixed(0).padStart(6)}   ${heap.toFixed(0).padStart(7)}   ${versus}${failures.length ? `   (${failures.length} wrong so far)` : ''}`)
}
const elapsed = (performance.now() - started) / 1000 // includes the checkpoints' settling

for (const { root } of runtimes.values()) await root.fiber.dispose()
let leftThreads = 0
let leftChildren = []
for (let attempt = 0; attempt < 40; attempt++) {
  leftThreads = threadCount() - threadsBefore
  leftChildren = childProcesses()
  if (leftThreads <= 0 && leftChildren.length === 0) break
  await sleep(50)
}

console.log(`\n${TOTAL} runs (${hostileRuns} hostile corpus cases with their follow-up runs, ${normalRuns} normal runs) in ${elapsed.toFixed(1)} s: ${(TOTAL / elapsed).toFixed(1)} runs/s overall`)
console.log(`RSS: ${firstRss.toFixed(0)} MB at the first checkpoint, worst later growth ${(worstGrowth * 100).toFixed(1)} % (limit ${RSS_GROWTH_LIMIT * 100} %)`)
const problems = []
if (worstGrowth > RSS_GROWTH_LIMIT) problems.push(`RSS grew ${(worstGrowth * 100).toFixed(1)} % after the first checkpoint`)
if (failures.length > 0) problems.push(`${failures.length} runs ended wrong:\n  ${failures.slice(0, 20).join('\n  ')}`)
if (leftThreads > 0 || leftChildren.length > 0) problems.push(`after disposal ${leftThreads} threads and ${leftChildren.length} child processes were left`)
console.log(problems.length === 0 ? 'soak passed' : `soak FAILED:\n${problems.join('\n')}`)
process.exitCode = problems.length === 0 ? 0 : 1
