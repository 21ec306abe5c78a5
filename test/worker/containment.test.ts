/**
 * Host containment on the default host (a helper process per environment): every kind of
 * memory counts against one budget, deadlines hold inside native calls, the host holds a bounded
 * amount of a program's traffic, and the host's processes are out of the program's reach; on
 * the thread host, a memory watch holds each running program to the same budget.
 */
import { execFileSync } from 'node:child_process'
import { mkdtempSync, realpathSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { Worker } from 'node:worker_threads'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { dataBaseline } from '../../src/system/memory-limit.js'
import { leakedSince, resourceBaseline, type ResourceSnapshot } from '../helpers/leaks.js'
import { ON_CONTAINER, startRuntime } from '../helpers/runtime.js'
import { bwrap, processesMatching } from '../helpers/sandbox.js'

const slow = {
  global: 'tools',
  functions: { hold: async () => new Promise<string>((resolve) => setTimeout(() => resolve('held'), 300)) },
}

/** Programs that keep 4 GiB of each kind of memory outside the V8 heap, touching every page. */
const OVER_BUDGET = [
  ['typed arrays', 'const kept = []; for (let i = 0; i < 16; i++) kept.push(new Uint8Array(256 * 1024 * 1024).fill(1)); return kept.length'],
  ['buffers', 'const kept = []; for (let i = 0; i < 16; i++) kept.push(Buffer.alloc(256 * 1024 * 1024, 1)); return kept.length'],
  [
    'WebAssembly memory',
    'const memory = new WebAssembly.Memory({ initial: 1, maximum: 65536 }); for (let i = 0; i < 64; i++) { memory.grow(1024); new Uint8Array(memory.buffer).fill(1, i * 2 ** 26) } return memory.buffer.byteLength',
  ],
]

describe('the process host', () => {
  let env: Awaited<ReturnType<typeof startRuntime>>
  let baseline: ResourceSnapshot
  let directory: string
  beforeAll(async () => {
    baseline = await resourceBaseline()
    directory = realpathSync(mkdtempSync(path.join(tmpdir(), 'ptc-containment-')))
    // Confined by default: the directory the tests share with programs is shown to them (read-only).
    env = await startRuntime({ maxMemoryMb: 512, maxOldGenerationSizeMb: 256, timeoutMs: 30_000, retainState: true, cwd: directory })
  })
  afterAll(async () => {
    await env.dispose()
    rmSync(directory, { recursive: true, force: true })
    expect(await leakedSince(baseline)).toEqual({ threads: 0, children: [], descriptors: 0 })
  })

  // The process tier's own facts, and a FIFO in a host directory a container cannot see.
  it.skipIf(ON_CONTAINER)('is the default and says so', () => {
    expect(env.runtime.isolation).toBe('process')
    expect(env.runtime.executionInstructions).toMatch(/Memory: 512 MiB in all/)
  })

  it.each(OVER_BUDGET)('stops a program whose %s exceed the memory budget, naming it', async (_kind, program) => {
    const result = await env.run(program)
    expect(result.error?.kind).toBe('worker-exit')
    // Node 26 counts array buffers against the worker's heap limit too, which may stop the
    // worker (out of memory) before the process budget refuses an allocation.
    expect(result.error?.message).toMatch(/memory budget of 512 MiB \(maxMemoryMb\)|the program ran out of memory/)
    expect((await env.run('return 1')).value).toBe(1)
  })

  it('survives a dictionary that grows until the heap gives out', async () => {
    const result = await env.run('const m = new Map(); for (let i = 0; ; i++) m.set(i, { i })')
    expect(result.error?.kind).toBe('worker-exit')
    expect(result.error?.message).toMatch(/memory/)
    expect((await env.run('return 2')).value).toBe(2)
  })

  it('keeps the deadline while the program is inside a native call', async () => {
    const started = Date.now()
    const result = await env.run(`(await import('node:crypto')).pbkdf2Sync('a', 'b', 1e9, 64, 'sha512')`, { timeoutMs: 500 })
    expect(result.error?.kind).toBe('timeout')
    expect(Date.now() - started).toBeLessThan(2_500)
  })

  it.skipIf(ON_CONTAINER)('keeps the deadline while the program waits to open a FIFO nobody writes', async () => {
    const fifo = path.join(directory, 'fifo')
    execFileSync('mkfifo', [fifo])
    const started = Date.now()
    const result = await env.run(`(await import('node:fs')).readFileSync(${JSON.stringify(fifo)})`, { timeoutMs: 500 })
    expect(result.error?.kind).toBe('timeout')
    expect(Date.now() - started).toBeLessThan(2_500)
  })

  it('refuses call arguments beyond the budget of calls in flight, inside the program', async () => {
    const result = await env.run(
      `const big = 'x'.repeat(5 * 1024 * 1024)
       const outcomes = await Promise.allSettled(Array.from({ length: 5 }, () => tools.hold(big)))
       return [outcomes.filter((o) => o.status === 'fulfilled').length, outcomes.find((o) => o.status === 'rejected')?.reason.message]`,
      { bindings: [slow] },
    )
    const [held, message] = result.value as [number, string]
    expect(held).toBe(3) // 3 × 5 MiB of JSON fit in the default 16 MiB, the 4th would not
    expect(message).toMatch(/over 16777216 bytes \(maxPendingCallBytes\)/)
  })

  it('fails as protocol a frame longer than the channel allows, before it is parsed', async () => {
    const result = await env.run(
      `const { writeSync } = await import('node:fs')
       const chunk = Buffer.alloc(16 * 1024 * 1024, 0x61)
       for (let i = 0; i < 20; i++) writeSync(3, chunk)
       await new Promise(() => {})`,
      { timeoutMs: 20_000 },
    )
    expect(result.error?.kind).toBe('protocol')
  })

  it.skipIf(!bwrap)('hides the host process (with bubblewrap): no pid to read or signal', async () => {
    process.env.PTC_TEST_HOST_SECRET = 'host-secret-7d41'
    const result = await env.run(
      `const fs = await import('node:fs')
       const attempts = []
       try { attempts.push(fs.readFileSync('/proc/${process.pid}/environ', 'latin1').includes('host-secret')) } catch (e) { attempts.push(e.code) }
       try { process.kill(${process.pid}, 'SIGUSR1'); attempts.push('signalled') } catch (e) { attempts.push(e.code) }
       return attempts`,
    )
    delete process.env.PTC_TEST_HOST_SECRET
    expect(result.value).toEqual(['ENOENT', 'ESRCH'])
  })

  it('sets the memory limit above what a fresh helper holds with its worker running', async () => {
    // What a Node process of this binary holds (VmData, KiB) while a worker with this heap cap runs.
    const script = `
      const { Worker } = require('node:worker_threads')
      const worker = new Worker('require("node:worker_threads").parentPort.postMessage(0); setInterval(() => {}, 1000)', { eval: true, resourceLimits: { maxOldGenerationSizeMb: 256 } })
      worker.once('message', () => { console.log(/VmData:\\s+(\\d+)/.exec(require('node:fs').readFileSync('/proc/self/status', 'utf8'))[1]); process.exit(0) })`
    const held = Number(execFileSync(process.execPath, ['-e', script], { encoding: 'utf8' }))
    expect(held).toBeGreaterThan(0)
    expect(await dataBaseline(256)).toBeGreaterThan(held)
  })

  it('leaves no subprocess of a background shell job behind', async () => {
    await env.run(`(await import('node:child_process')).execSync('sleep 60.0419 > /dev/null 2>&1 &'); return 1`)
    expect(processesMatching('sleep 60.0419')).toEqual([])
  })
})

// Worker.getHeapStatistics() arrived in Node 22.16 and 24; without it only the RSS backstop acts.
const samplesWorkers = typeof (Worker.prototype as { getHeapStatistics?: unknown }).getHeapStatistics === 'function'

describe('the thread host', () => {
  let env: Awaited<ReturnType<typeof startRuntime>>
  let baseline: ResourceSnapshot
  beforeAll(async () => {
    baseline = await resourceBaseline()
    env = await startRuntime({ isolation: 'thread', maxMemoryMb: 512, maxOldGenerationSizeMb: 256, timeoutMs: 30_000 })
  })
  afterAll(async () => {
    await env.dispose()
    expect(await leakedSince(baseline)).toEqual({ threads: 0, children: [], descriptors: 0 })
  })

  it('states the memory budget to the model', () => {
    expect(env.runtime.executionInstructions).toMatch(/Memory: 512 MiB in all/)
  })

  it.each(OVER_BUDGET)('stops a program whose %s exceed the memory budget, naming it', async (_kind, program) => {
    const result = await env.run(program)
    expect(result.error?.kind).toBe('worker-exit')
    expect(result.error?.message).toMatch(/memory budget of 512 MiB \(maxMemoryMb\)/)
    expect((await env.run('return 1')).value).toBe(1)
  })

  it('leaves a program under the budget alone', async () => {
    const result = await env.run('const kept = []; for (let i = 0; i < 3; i++) kept.push(Buffer.alloc(100 * 1024 * 1024, 1)); return kept.length')
    expect(result.value).toBe(3)
  })

  it.skipIf(!samplesWorkers)('stops only the program over its budget when Node can sample each worker', async () => {
    const [bystander, hog] = await Promise.all([
      env.run('await new Promise((resolve) => setTimeout(resolve, 1500)); return "untouched"'),
      env.run('const kept = []; for (let i = 0; i < 16; i++) kept.push(Buffer.alloc(256 * 1024 * 1024, 1)); return kept.length'),
    ])
    expect(hog.error?.message).toMatch(/memory budget of 512 MiB/)
    expect(bystander.value).toBe('untouched')
  })
})
