/**
 * Table: tool results as people write them. A tool resolves about 1 MiB of records; a program
 * awaits it CALLS times. The same records cross through a raw namespace (lossless JSON, checked
 * as is) and through a namespace with `convertResults` (every tool group: converted as
 * `JSON.stringify` would, then checked), once as lossless JSON and once holding a `Date` and an
 * `undefined` field per record. The host's conversion is one more bounded pass over the value.
 */
import { startOurs } from './ours.mjs'
import { fmt, interleave, machine, scale, summarize, table, target, times } from './stats.mjs'

const CALLS = 20
const RECORDS = 8_000
const ROUNDS = scale(5, 2)

const lossless = Array.from({ length: RECORDS }, (_, i) => ({ id: i, name: `record ${i}`, tags: ['a', 'b'], at: '2026-01-01T00:00:00.000Z', score: i / 7 }))
const asWritten = Array.from({ length: RECORDS }, (_, i) => ({ id: i, name: `record ${i}`, tags: ['a', 'b'], at: new Date(Date.UTC(2026, 0, 1)), note: undefined, score: i / 7 }))
const bytes = JSON.stringify(lossless).length

async function results() {
  console.log(`\n## Tool results converted as JSON.stringify would (ms per call)\n\n${machine()}; thread host; ${CALLS} calls of ${fmt(bytes / 1024)} KiB per run, ${ROUNDS} interleaved rounds.`)
  const ours = await startOurs({ isolation: 'thread', poolSize: 1 })
  const program = `let n = 0; for (let i = 0; i < ${CALLS}; i++) n += (await tools.records()).length; return n`
  const perCall = (namespace) => async () => {
    const started = performance.now()
    const result = await ours.run({ program, bindings: [namespace], timeoutMs: 120_000 })
    if (result.error || result.value !== CALLS * RECORDS) throw new Error(`run failed: ${JSON.stringify(result.error ?? result.value)}`)
    return (performance.now() - started) / CALLS
  }
  const scenarios = [
    { name: 'raw namespace, lossless records', sample: perCall({ global: 'tools', functions: { records: async () => lossless } }) },
    { name: 'convertResults, lossless records', sample: perCall({ global: 'tools', convertResults: true, functions: { records: async () => lossless } }) },
    { name: 'convertResults, a Date and an undefined field per record', sample: perCall({ global: 'tools', convertResults: true, functions: { records: async () => asWritten } }) },
  ]
  const samples = await interleave(scenarios, { rounds: ROUNDS, per: 1 })
  const stats = new Map([...samples].map(([name, values]) => [name, summarize(values)]))
  const raw = stats.get('raw namespace, lossless records').median
  table('one call resolving the records, program to program', ['namespace', 'median ms', 'p95 ms', 'vs raw'], [...stats].map(([name, s]) => [name, fmt(s.median), fmt(s.p95), times(s.median / raw)]))
  const ratio = stats.get('convertResults, lossless records').median / raw
  target('a converting namespace costs ≤ 1.5x a raw one for the same lossless result', times(ratio), ratio <= 1.5)
  await ours.dispose()
}

await results()
