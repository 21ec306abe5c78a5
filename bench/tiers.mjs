/**
 * Table: the tiers beyond this machine's processes. How long a fresh environment takes to serve
 * its first run (spawn to result of `return 1`) and what one binding call costs in a kept
 * environment, on the stream tier (the stream entry as a local process: the stream's own cost)
 * and the container tier (podman, where it runs), as ratios against the process tier measured
 * in the same rounds.
 *
 * `node bench/run.mjs tiers`. PTC_CONTAINER_RUNTIME and PTC_CONTAINER_ARGS set podman's OCI
 * runtime and extra `run` arguments (by default the container tier finds them at start).
 */
import { spawnSync } from 'node:child_process'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { localStreams } from './local-stream.mjs'
import { startOurs } from './ours.mjs'
import { fmt, interleave, machine, note, now, scale, settle, summarize, table, times } from './stats.mjs'

// The stream entry and the image come from the same build the table measures.
const DIST = process.env.PTC_BENCH_DIST ? pathToFileURL(process.env.PTC_BENCH_DIST).href : new URL('../dist/index.js', import.meta.url).href
const { buildImage } = await import(DIST)
const ENTRY = fileURLToPath(new URL('stream-entry.cjs', DIST))
const ROUNDS = scale(6, 2)
const STARTS = scale(4, 2)
const CALLS = scale(400, 50)
const tools = [{ global: 'tools', functions: { echo: async (args) => args } }]

const localStream = localStreams(ENTRY)

/** podman's `container` options here, with an image built for this run, or why it cannot run. */
async function containerTier() {
  const probe = spawnSync('podman', ['--version'], { encoding: 'utf8' })
  if (probe.status !== 0) return { problem: 'podman is not installed' }
  // The runtime finds its OCI runtime and limits itself; these only override it.
  const { PTC_CONTAINER_RUNTIME: runtime, PTC_CONTAINER_ARGS: extra } = process.env
  const args = extra === undefined ? undefined : extra.split(' ').filter(Boolean)
  const image = await buildImage({ tag: `ptc-runtime-bench-${process.pid}:latest` })
  process.on('exit', () => spawnSync('podman', ['rmi', '-f', image], { stdio: 'ignore' }))
  return { config: { isolation: 'container', container: { image, ...(args ? { args } : {}), ...(runtime ? { runtime } : {}) } } }
}

const TIERS = [
  { name: 'process (sandbox none)', config: { isolation: 'process', sandbox: 'none' } },
  { name: 'stream, local entry', config: { isolation: { stream: localStream } } },
]
const container = await containerTier()
if (container.config) TIERS.push({ name: 'container (podman)', config: container.config })

const runtimes = new Map()
for (const tier of TIERS) {
  runtimes.set(tier.name, {
    fresh: await startOurs({ ...tier.config, poolSize: 0 }),
    kept: await startOurs({ ...tier.config, retainState: true }),
    owner: {},
  })
}

const expectOk = (result) => {
  if (result.error) throw new Error(`bench run failed: ${JSON.stringify(result.error)}`)
  return result
}

const starts = await interleave(TIERS.map((tier) => ({
  name: tier.name,
  sample: async () => {
    const begin = now()
    expectOk(await runtimes.get(tier.name).fresh.run({ program: 'return 1', bindings: [] }))
    return now() - begin
  },
})), { rounds: ROUNDS, per: STARTS })

const perCall = await interleave(TIERS.map((tier) => ({
  name: tier.name,
  sample: async () => {
    const { kept, owner } = runtimes.get(tier.name)
    const begin = now()
    expectOk(await kept.run({ program: `for (let i = 0; i < ${CALLS}; i++) await tools.echo(i)\nreturn 1`, bindings: tools, stateOwner: owner }))
    return (now() - begin) / CALLS
  },
})), { rounds: ROUNDS, per: 1, gap: () => settle({ maxMs: 500 }) })

for (const { fresh, kept } of runtimes.values()) await Promise.all([fresh.dispose(), kept.dispose()])

console.log(`\n${machine()}`)
const base = { start: summarize(starts.get(TIERS[0].name)).median, call: summarize(perCall.get(TIERS[0].name)).median }
table('Tiers: a fresh environment\'s first run, and one binding call in a kept one (medians)', ['tier', 'start ms', 'start vs process', 'per call ms', 'per call vs process'], TIERS.map((tier) => {
  const start = summarize(starts.get(tier.name)).median
  const call = summarize(perCall.get(tier.name)).median
  return [tier.name, fmt(start), times(start / base.start), fmt(call), times(call / base.call)]
}))
if (container.problem) note(`container tier not measured: ${container.problem}`)
note('start: spawn to the result of `return 1` with no pooled environment; per call: a loop of sequential `await tools.echo(i)` calls.')
