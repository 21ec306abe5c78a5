/**
 * One memory measurement, in its own process started with --expose-gc: memory after `low`
 * instances and after `high` instances of one kind of sandbox, each read after full GCs (of this
 * process's heap) once this process and its children are idle (so pooled workers and helpers
 * have finished booting). Memory is this process's plus that of every process it started
 * (helper processes and their bubblewrap parents), as RSS and PSS from /proc/<pid>/smaps_rollup:
 * PSS splits each shared page among the processes that map it, so summed over the tree it counts
 * the Node binary once, however many helpers share it, and its growth is what one more instance
 * really costs. With `idle`, each reading is also taken again `IDLE_MS` later: V8's memory
 * reducer returns memory a few seconds after a heap stops allocating, which is how a retained
 * environment spends the time between a conversation's turns. Prints one JSON line.
 */
import vm from 'node:vm'
import { readFileSync, readdirSync } from 'node:fs'
import { createRequire } from 'node:module'
import { Worker } from 'node:worker_threads'
import { startOurs } from './ours.mjs'
import { settle, sleep } from './stats.mjs'

const [mode, host, low, high, idle] = [process.argv[2], process.argv[3], Number(process.argv[4]), Number(process.argv[5]), process.argv[6] === 'idle']
// `process-unconfined` is the process host with `sandbox: 'none'`, as it was before confinement became the default.
const { isolation, ...hostConfig } = host === 'process-unconfined' ? { isolation: 'process', sandbox: 'none' } : { isolation: host }
/** Longer than the memory reducer's first delay (8 s) and its follow-up collections. */
const IDLE_MS = 15_000
const keep = []
const alive = setInterval(() => {}, 1 << 30)

/** Every process this one started, directly or not. */
function descendants(pid = process.pid) {
  const found = []
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    for (const child of readFileSync(`/proc/${pid}/task/${tid}/children`, 'utf8').split(' ').filter(Boolean).map(Number)) {
      found.push(child, ...descendants(child))
    }
  }
  return found
}

/** RSS and PSS of one process, in MB (zero for a process that ended meanwhile). */
function rollup(pid) {
  try {
    const text = readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8')
    const field = (name) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(text)?.[1] ?? 0) / 1024
    return { rss: field('Rss'), pss: field('Pss') }
  } catch {
    return { rss: 0, pss: 0 }
  }
}

const add = (a, b) => ({ rss: a.rss + b.rss, pss: a.pss + b.pss })

/** This process (`host`), its descendants (`children`, with their pids) and the sum (`tree`). */
async function reading() {
  await settle({ minMs: 100, maxMs: 5000, windowMs: 50, busy: 0.05 })
  for (let i = 0; i < 3; i++) {
    globalThis.gc()
    await sleep(50)
  }
  const pids = descendants()
  const host = rollup(process.pid)
  const children = pids.map(rollup).reduce(add, { rss: 0, pss: 0 })
  return { host, children, tree: add(host, children), pids: pids.length }
}

const POOL_PER_RUNTIME = 2
const kinds = {
  /** Idle pre-started environments, `POOL_PER_RUNTIME` per runtime. */
  async pooled() {
    keep.push(await startOurs({ ...hostConfig, isolation, poolSize: POOL_PER_RUNTIME }))
    return POOL_PER_RUNTIME
  },
  /** One retained environment per state owner, after one run. */
  async retained() {
    keep[0] ??= await startOurs({ ...hostConfig, isolation, poolSize: 0, retainState: true })
    const owner = {}
    keep.push(owner)
    const result = await keep[0].run({ program: 'globalThis.kept = [1, 2, 3]\nreturn 1', bindings: [], stateOwner: owner })
    if (result.error) throw new Error(JSON.stringify(result.error))
    return 1
  },
  async worker() {
    const worker = new Worker('setInterval(() => {}, 1 << 30)', { eval: true, env: {} })
    worker.unref()
    keep.push(worker)
    return 1
  },
  async vm() {
    keep.push(vm.createContext({}))
    return 1
  },
  async quickjs() {
    const { getQuickJS } = await import('quickjs-emscripten')
    const runtime = (await getQuickJS()).newRuntime()
    keep.push(runtime, runtime.newContext())
    return 1
  },
  async isolatedVm() {
    const ivm = createRequire(import.meta.url)('isolated-vm')
    const isolate = new ivm.Isolate({ memoryLimit: 64 })
    keep.push(isolate, await isolate.createContext())
    return 1
  },
}

/** Growth from `from` to `to`, per instance, for each part. */
const per = (from, to, count) => Object.fromEntries(
  ['host', 'children', 'tree'].map((part) => [part, { rss: (to[part].rss - from[part].rss) / count, pss: (to[part].pss - from[part].pss) / count }]),
)

const grow = kinds[mode]
let count = 0
const start = await reading()
while (count < low) count += await grow()
const first = await reading()
const lowIdle = idle ? (await sleep(IDLE_MS), await reading()) : first
while (count < high) count += await grow()
const last = await reading()
const highIdle = idle ? (await sleep(IDLE_MS), await reading()) : undefined
console.log(JSON.stringify({
  first: per(start, first, low),
  // The instances added last, fresh; those from before have had the same rest as in `lowIdle`.
  perInstance: per(lowIdle, last, high - low),
  idle: highIdle && per(lowIdle, highIdle, high - low),
  processes: last.pids,
}))
clearInterval(alive)
process.exit(0)
