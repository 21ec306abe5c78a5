/**
 * Table 5: the transformer. `lowerProgram` is internal (the runtime calls it on every run that
 * misses its cache), so the bench bundles src/transform on its own with tsup, the same compiler
 * the package build uses, into node_modules/.cache, and measures it next to acorn's bare parse
 * (the floor of an acorn-based transformer) and V8's own compile of the same text.
 */
import { fileURLToPath } from 'node:url'
import vm from 'node:vm'
import { parse } from 'acorn'
import { build } from 'tsup'
import { fmt, interleave, machine, now, scale, summarize, table, times } from './stats.mjs'

const ROUNDS = scale(4, 1)
const PER = 1
const SMALL_RUNS = scale(200, 50)
const root = fileURLToPath(new URL('..', import.meta.url))
const outDir = `${root}node_modules/.cache/ptc-bench`

async function loadTransform() {
  await build({
    entry: { transform: `${root}src/transform/index.ts` },
    outDir,
    format: ['esm'],
    platform: 'node',
    target: 'node20',
    config: false,
    dts: false,
    silent: true,
    outExtension: () => ({ js: '.mjs' }),
  })
  return import(`${outDir}/transform.mjs?${Date.now()}`)
}

/**
 * A model-style program of about `bytes` bytes: tool calls, destructuring, template literals,
 * arrow functions, classes, optional chaining, loops and logging, ending in an expression (a
 * script's completion value). Deterministic, so every run measures the same text.
 */
function modelProgram(bytes, salt = '') {
  const blocks = []
  let size = 0
  for (let i = 0; size < bytes; i++) {
    const block = `
// step ${i}${salt}: fetch, filter and summarize
const { items: items${i} = [], next: next${i} } = await tools.search({ query: \`topic \${${i} % 7}\`, limit: ${i % 50} })
const picked${i} = items${i}.filter((item) => item?.score > 0.${i % 9} && !item.hidden).map(({ id, title }) => ({ id, title: title.trim() }))
class Summary${i} {
  #count = 0
  constructor(rows) { this.rows = rows; this.#count = rows.length }
  get label() { return \`\${this.#count} rows (\${this.rows[0]?.title ?? 'none'})\` }
}
for (const [index, row] of picked${i}.entries()) {
  if (index > 3) break
  console.log(index, row.id, JSON.stringify({ next: next${i} ?? null, tag: 'step-${i}' }))
}
let total${i} = 0
while (total${i} < ${i % 5}) total${i} += picked${i}.length || 1
const summary${i} = new Summary${i}(picked${i}).label
`
    blocks.push(block)
    size += block.length
  }
  blocks.push('\n({ done: true, steps: ' + blocks.length + ' })\n')
  return blocks.join('')
}

const ACORN = { ecmaVersion: 'latest', sourceType: 'script', allowAwaitOutsideFunction: true }

async function transform() {
  const { lowerProgram } = await loadTransform()
  const big = modelProgram(1 << 20)
  const megabytes = Buffer.byteLength(big) / 2 ** 20
  console.log(`\n## Transformer\n\n${machine()}; a ${fmt(megabytes)} MB model-style program (${big.split('\n').length} lines), ${ROUNDS} interleaved rounds.`)
  const timed = (work) => () => {
    const start = now()
    work()
    return now() - start
  }
  const scenarios = [
    { name: "lowerProgram(source, 'script')", sample: timed(() => lowerProgram(big, 'script')) },
    { name: "lowerProgram(source, 'function-body')", sample: timed(() => lowerProgram(big, 'function-body')) },
    { name: 'acorn.parse alone (floor of an acorn-based transformer)', sample: timed(() => parse(big, ACORN)) },
    { name: 'V8 compile: new vm.Script (lazy; reference)', sample: timed(() => new vm.Script(`(async () => {${big}\n})`)) },
  ]
  for (const scenario of scenarios) scenario.sample()
  const samples = await interleave(scenarios, { rounds: ROUNDS, per: PER, gap: async () => globalThis.gc?.() })
  const stats = [...samples].map(([name, values]) => [name, summarize(values)])
  const lowering = stats[0][1].median
  table(
    '1 MB program',
    ['operation', 'median ms', 'p95 ms', 'MB/s (median)', 'vs lowerProgram script'],
    stats.map(([name, s]) => [name, fmt(s.median), fmt(s.p95), fmt(megabytes / (s.median / 1000)), times(s.median / lowering)]),
  )

  // The per-run cost: a small program, unique each time so nothing can be cached.
  const small = Array.from({ length: SMALL_RUNS }, (_, i) => modelProgram(3 * 1024, ` #${i}`))
  const perRun = (work) => small.map((source) => {
    const start = now()
    work(source)
    return (now() - start) * 1000
  })
  for (let i = 0; i < 3; i++) perRun((source) => lowerProgram(source, 'script'))
  const smallStats = [
    ["lowerProgram(source, 'script')", summarize(perRun((source) => lowerProgram(source, 'script')))],
    ["lowerProgram(source, 'function-body')", summarize(perRun((source) => lowerProgram(source, 'function-body')))],
    ['acorn.parse alone', summarize(perRun((source) => parse(source, ACORN)))],
    ['V8 compile: new vm.Script', summarize(perRun((source) => new vm.Script(`(async () => {${source}\n})`)))],
  ]
  table(
    `3 KB program, unique text each run (${SMALL_RUNS} runs; the runtime caches by source, so this is a cache miss)`,
    ['operation', 'median µs', 'p95 µs'],
    smallStats.map(([name, s]) => [name, fmt(s.median), fmt(s.p95)]),
  )
}

await transform()
