/**
 * Table: Python beside JavaScript on the default confined tier (a bubblewrap-confined helper
 * per environment). A fresh environment's first run (`poolSize: 0`: spawn, for Python also the
 * restore of the interpreter's memory snapshot, to the result of a trivial program), and a
 * program that calls three tools concurrently, prints and returns, taken from a pool of one, as
 * ratios against JavaScript measured in the same rounds. Skipped when pyodide is not installed.
 *
 * `node bench/run.mjs python`.
 */
import { createRequire } from 'node:module'
import { startSandboxedIfWorking } from './ours.mjs'
import { fmt, interleave, machine, note, now, scale, settle, sleep, summarize, table, times } from './stats.mjs'

try {
  createRequire(import.meta.url).resolve('pyodide/package.json')
} catch {
  note('python not measured: the pyodide package is not installed')
  process.exit(0)
}

const ROUNDS = scale(4, 2)
const STARTS = scale(3, 1)
// A pool of one refills in the background; each pooled sample waits this long first.
const REFILL_MS = scale(4000, 3000)
const tools = [{ global: 'tools', functions: { double: async ({ n }) => n * 2 } }]
const LANGUAGES = {
  javascript: {
    trivial: 'return 1',
    threeCalls: 'console.log("go")\nreturn await Promise.all([1, 2, 3].map((n) => tools.double({ n })))',
  },
  python: {
    trivial: 'return 1',
    threeCalls: 'import asyncio\nprint("go")\nreturn list(await asyncio.gather(*(tools.double(n=n) for n in (1, 2, 3))))',
  },
}

const runtimes = new Map()
const started = []
async function confined(config) {
  const outcome = await startSandboxedIfWorking(config)
  if (outcome.skipped) {
    note(`python not measured: ${outcome.skipped}`)
    await Promise.all(started.map((entry) => entry.dispose()))
    process.exit(0)
  }
  started.push(outcome)
  return outcome.ours
}
for (const language of Object.keys(LANGUAGES)) {
  runtimes.set(language, { fresh: await confined({ language, poolSize: 0 }), pooled: await confined({ language, poolSize: 1 }) })
}

const expect = (result, value) => {
  if (result.error || JSON.stringify(result.value) !== JSON.stringify(value)) throw new Error(`bench run failed: ${JSON.stringify(result.error ?? result.value)}`)
}

const starts = await interleave(Object.keys(LANGUAGES).map((language) => ({
  name: language,
  sample: async () => {
    const begin = now()
    expect(await runtimes.get(language).fresh.run({ program: LANGUAGES[language].trivial, bindings: [] }), 1)
    return now() - begin
  },
})), { rounds: ROUNDS, per: STARTS })

const pooled = await interleave(Object.keys(LANGUAGES).map((language) => ({
  name: language,
  sample: async () => {
    const begin = now()
    expect(await runtimes.get(language).pooled.run({ program: LANGUAGES[language].threeCalls, bindings: tools }), [2, 4, 6])
    return now() - begin
  },
})), { rounds: ROUNDS, per: 1, gap: async () => { await sleep(REFILL_MS); await settle() } })

await Promise.all(started.map((entry) => entry.dispose()))

console.log(`\n${machine()}`)
const base = { start: summarize(starts.get('javascript')).median, pooled: summarize(pooled.get('javascript')).median }
table('Python beside JavaScript, confined: a fresh environment, and a pooled three-call program (medians)', ['language', 'fresh start ms', 'vs JavaScript', 'pooled 3 calls ms', 'vs JavaScript'], Object.keys(LANGUAGES).map((language) => {
  const start = summarize(starts.get(language)).median
  const call = summarize(pooled.get(language)).median
  return [language, fmt(start), times(start / base.start), fmt(call), times(call / base.pooled)]
}))
note(`fresh start: spawn to the result of \`return 1\` with no pooled environment (Python restores its snapshot); pooled: a program printing and awaiting three concurrent tool calls, run after ${REFILL_MS} ms for the pool to refill.`)
