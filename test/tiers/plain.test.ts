/**
 * The plain tier (src/host/environments/plain/tier.ts): the smallest tier, one file and one line
 * in `TIERS`, which supplies only a pipe. Everything else it gets from the connection and the
 * pipe environment; these runs show that it is enough: calls, output, state, a timeout, forged
 * traffic, the memory budget, disposal.
 */
import { spawnSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { PtcBindingNamespace } from 'ptc-runtime'
import { startRuntime, textOf } from '../helpers/runtime.js'

/** `echo` is the tool the hijack prelude calls to learn the run's id. */
const shop: PtcBindingNamespace = {
  global: 'tools',
  functions: {
    price: async (args) => ({ apple: 3, pear: 5 })[(args as { item: 'apple' | 'pear' }).item],
    echo: async (args) => args as never,
  },
}

/** The corpus's prelude that takes over the worker's channel (`forge` and `hang`). */
const takeOverChannel = readFileSync(new URL('../hostile/preludes/hijack.js', import.meta.url), 'utf8')

/** The pids of the helpers (`helper.cjs`) this test process started, still running. */
const helperPids = (): number[] =>
  spawnSync('ps', ['-eo', 'pid=,ppid=,args='], { encoding: 'utf8' }).stdout.split('\n')
    .map((line) => line.trim().split(/\s+/))
    .filter((fields) => Number(fields[1]) === process.pid && fields.some((field) => field.endsWith('helper.cjs')))
    .map((fields) => Number(fields[0]))

describe('the plain tier, a pipe and nothing more', () => {
  let plain: Awaited<ReturnType<typeof startRuntime>>
  beforeAll(async () => {
    plain = await startRuntime({ isolation: 'plain', retainState: true, programFormat: 'script', poolSize: 1 })
  })
  afterAll(() => plain.dispose())

  it('serves tool calls and output through its pipe, and an owner’s runs share their state', async () => {
    const owner = {}
    const priced = await plain.run('const [a, p] = await Promise.all([tools.price({ item: "apple" }), tools.price({ item: "pear" })])\nconsole.log(`apple ${a}, pear ${p}`)\nconst total = a + p\ntotal', { stateOwner: owner, bindings: [shop] })
    expect(priced.error).toBeUndefined()
    expect([priced.value, textOf(priced)]).toEqual([8, 'apple 3, pear 5\n'])
    expect(priced.calls.map((call) => [call.tool, call.outcome])).toEqual([['tools.price', 'ok'], ['tools.price', 'ok']])
    const later = await plain.run('total * 2', { stateOwner: owner })
    expect(later.value).toBe(16)
    expect(plain.runtime.isolation).toBe('plain')
  })

  it('kills a program past its time budget and serves the next run from a fresh helper', async () => {
    const spun = await plain.run('globalThis.left = true\nfor (;;) {}', { timeoutMs: 400 })
    expect(spun.error?.kind).toBe('timeout')
    const fresh = await plain.run('globalThis.left === undefined')
    expect(fresh.value).toBe(true)
  })

  it('fails as protocol a run whose program writes frames of its own, and the next run is served', async () => {
    const forged = await plain.run(`${takeOverChannel}\nforge({ type: 'done', run: runId + 1 })\nawait hang()`, { bindings: [shop] })
    expect(forged.error?.kind).toBe('protocol')
    expect((await plain.run('6 * 7')).value).toBe(42)
  })
})

describe('the plain tier and the memory budget', () => {
  it('stops a program that allocates past maxMemoryMb, naming it, and serves the next run', async () => {
    const capped = await startRuntime({ isolation: 'plain', maxMemoryMb: 256, maxOldGenerationSizeMb: 128, timeoutMs: 30_000 })
    try {
      const result = await capped.run('const kept = []; for (let i = 0; i < 16; i++) kept.push(Buffer.alloc(128 * 1024 * 1024, 1)); return kept.length')
      expect(result.error?.kind).toBe('worker-exit')
      expect(result.error?.message).toMatch(/memory budget of 256 MiB \(maxMemoryMb\)|the program ran out of memory/)
      expect((await capped.run('return 1')).value).toBe(1)
    } finally {
      await capped.dispose()
    }
  })
})

const gone = (pid: number) => {
  try {
    process.kill(pid, 0)
    return false
  } catch {
    return true
  }
}

describe('the plain tier at disposal', () => {
  it('leaves none of its helpers running, nor a subprocess a program left in a session of its own', async () => {
    const own = await startRuntime({ isolation: 'plain', poolSize: 2, retainState: true })
    const owner = {}
    const left = await own.run('const { spawn } = await import("node:child_process")\nreturn spawn("sleep", ["600"], { detached: true, stdio: "ignore" }).pid', { stateOwner: owner })
    const pid = left.value as number
    expect(Number.isInteger(pid)).toBe(true)
    expect(helperPids().length).toBeGreaterThan(0)
    await own.dispose()
    expect(helperPids()).toEqual([])
    expect(gone(pid)).toBe(true)
  })
})
