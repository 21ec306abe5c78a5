/**
 * One memory measurement, in its own process started with --expose-gc: RSS after `low`
 * instances and after `high` instances of one kind of idle sandbox, each read after full GCs and
 * once the process is idle (so pooled workers have finished booting). Prints one JSON line.
 */
import vm from 'node:vm'
import { createRequire } from 'node:module'
import { Worker } from 'node:worker_threads'
import { runExpecting, startOurs } from './ours.mjs'
import { settle, sleep } from './stats.mjs'

const [mode, low, high] = [process.argv[2], Number(process.argv[3]), Number(process.argv[4])]
const keep = []
const alive = setInterval(() => {}, 1 << 30)

async function rss() {
  await settle({ minMs: 100, maxMs: 5000, windowMs: 50, busy: 0.05 })
  for (let i = 0; i < 3; i++) {
    globalThis.gc()
    await sleep(50)
  }
  return process.memoryUsage.rss() / 2 ** 20
}

const POOL_PER_RUNTIME = 2
const kinds = {
  /** Idle pre-spawned workers, `POOL_PER_RUNTIME` per runtime. */
  async pooled() {
    keep.push(await startOurs({ poolSize: POOL_PER_RUNTIME }))
    return POOL_PER_RUNTIME
  },
  /** One retained environment per state owner, after one run. */
  async retained() {
    keep[0] ??= await startOurs({ poolSize: 0, retainState: true })
    const owner = {}
    keep.push(owner)
    await keep[0].run({ program: 'globalThis.kept = [1, 2, 3]\nreturn 1', bindings: [], stateOwner: owner }).then((result) => {
      if (result.error) throw new Error(JSON.stringify(result.error))
    })
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

const add = kinds[mode]
let count = 0
const start = await rss()
while (count < low) count += await add()
const first = await rss()
while (count < high) count += await add()
const last = await rss()
console.log(JSON.stringify({ perInstance: (last - first) / (high - low), first: (first - start) / low, start }))
clearInterval(alive)
process.exit(0)
