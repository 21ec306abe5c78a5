/**
 * What every tier whose environments are a pipe (`PipeEnvironment`, src/host/environments/pipe.ts)
 * must do, as one suite each such tier runs (plain.test.ts, stream.test.ts): concurrent tool
 * calls and an owner's state, a timeout, a forged frame, the memory budget, and disposal leaving
 * nothing of the tier running. A tier's own test adds only what is its own.
 */
import { readFileSync } from 'node:fs'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { PtcBindingNamespace, WorkerPtcRuntimeOptions } from 'ptc-runtime'
import { startRuntime, textOf } from '../helpers/runtime.js'
import { isDead } from '../../src/system/process-sweep.js'

export interface PipeTierUnderTest {
  /** What the runtime reports as its `isolation`. */
  readonly name: string
  /** The configuration that selects the tier. */
  readonly isolation: NonNullable<WorkerPtcRuntimeOptions['isolation']>
  /** The tier's processes this test process started that still run (helpers, entries). */
  readonly running: () => unknown[]
  /**
   * Whether a subprocess a program started in a session of its own ends with the environment
   * (the plain tier sweeps for its marker); otherwise a subprocess in the helper's group is the one checked.
   */
  readonly endsDetachedSubprocesses: boolean
}

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

/** Registers the suite for `tier`. */
export function describePipeTier(tier: PipeTierUnderTest): void {
  describe(`the ${tier.name} tier, as every pipe tier`, () => {
    let runtime: Awaited<ReturnType<typeof startRuntime>>
    beforeAll(async () => {
      runtime = await startRuntime({ isolation: tier.isolation, retainState: true, programFormat: 'script', poolSize: 1, timeoutMs: 20_000 })
    })
    afterAll(() => runtime.dispose())

    it('serves concurrent tool calls and output through its pipe, and an owner’s runs share their state', async () => {
      const owner = {}
      const priced = await runtime.run('const [a, p] = await Promise.all([tools.price({ item: "apple" }), tools.price({ item: "pear" })])\nconsole.log(`apple ${a}, pear ${p}`)\nconst total = a + p\ntotal', { stateOwner: owner, bindings: [shop] })
      expect(priced.error).toBeUndefined()
      expect([priced.value, textOf(priced)]).toEqual([8, 'apple 3, pear 5\n'])
      expect(priced.calls.map((call) => [call.tool, call.outcome])).toEqual([['tools.price', 'ok'], ['tools.price', 'ok']])
      const later = await runtime.run('total * 2', { stateOwner: owner })
      expect(later.value).toBe(16)
      expect(runtime.runtime.isolation).toBe(tier.name)
    })

    it('kills a program past its time budget and serves the next run from a fresh environment', async () => {
      const spun = await runtime.run('globalThis.left = true\nfor (;;) {}', { timeoutMs: 400 })
      expect(spun.error?.kind).toBe('timeout')
      expect((await runtime.run('globalThis.left === undefined')).value).toBe(true)
    })

    it('fails as protocol a run whose program writes frames of its own, and the next run is served', async () => {
      const forged = await runtime.run(`${takeOverChannel}\nforge({ type: 'done', run: runId + 1 })\nawait hang()`, { bindings: [shop] })
      expect(forged.error?.kind).toBe('protocol')
      expect((await runtime.run('6 * 7')).value).toBe(42)
    })
  })

  describe(`the ${tier.name} tier and the memory budget`, () => {
    it('stops a program that allocates past maxMemoryMb, naming it, and serves the next run', async () => {
      const capped = await startRuntime({ isolation: tier.isolation, maxMemoryMb: 256, maxOldGenerationSizeMb: 128, timeoutMs: 30_000 })
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

  describe(`the ${tier.name} tier at disposal`, () => {
    it('leaves nothing of the tier running, nor a subprocess a program left', async () => {
      const own = await startRuntime({ isolation: tier.isolation, poolSize: 2, retainState: true })
      const detached = tier.endsDetachedSubprocesses
      const left = await own.run(`const { spawn } = await import("node:child_process")\nreturn spawn("sleep", ["600"], { detached: ${detached}, stdio: "ignore" }).pid`, { stateOwner: {} })
      const pid = left.value as number
      expect(Number.isInteger(pid)).toBe(true)
      expect(tier.running().length).toBeGreaterThan(0)
      await own.dispose()
      expect(tier.running()).toEqual([])
      // A zombie runs nothing: the helper that was its parent may still be exiting (at SCHED_IDLE,
      // on a busy machine, for a while), and only then does init reap it.
      expect(isDead(pid)).toBe(true)
    })
  })
}
