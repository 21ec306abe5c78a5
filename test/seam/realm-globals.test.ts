import vm from 'node:vm'
import { Worker } from 'node:worker_threads'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { FIXED_REALM_GLOBALS } from '../../src/seam/names.js'
import { CONFINED, startRuntime } from '../helpers/runtime.js'

/** Own string-keyed globals that are not configurable: no definition can replace them. */
const FIXED_GLOBALS_SOURCE = `(() => {
  const fixed = []
  for (const key of Reflect.ownKeys(globalThis)) {
    if (typeof key !== 'string') continue
    const descriptor = Reflect.getOwnPropertyDescriptor(globalThis, key)
    if (!descriptor.configurable) fixed.push(key)
  }
  return fixed.sort()
})()`

function fixedGlobalsOfFreshWorker(): Promise<string[]> {
  const worker = new Worker(
    `require('node:worker_threads').parentPort.postMessage(${FIXED_GLOBALS_SOURCE})`,
    { eval: true },
  )
  return new Promise<string[]>((resolve, reject) => {
    worker.once('message', resolve)
    worker.once('error', reject)
  }).finally(() => worker.terminate())
}

describe('globals a binding cannot take', () => {
  it('covers every global a fresh worker realm cannot redefine', async () => {
    const fixed = await fixedGlobalsOfFreshWorker()
    expect(fixed).toEqual(expect.arrayContaining(['Infinity', 'NaN', 'undefined']))
    expect(fixed.filter((name) => !FIXED_REALM_GLOBALS.has(name))).toEqual([])
  })

  it('covers every global a fresh vm context cannot redefine', () => {
    const fixed = vm.runInContext(FIXED_GLOBALS_SOURCE, vm.createContext()) as string[]
    expect([...fixed].filter((name) => !FIXED_REALM_GLOBALS.has(name))).toEqual([])
  })

  describe('a run', () => {
    let runtime: Awaited<ReturnType<typeof startRuntime>>
    beforeAll(async () => {
      runtime = await startRuntime()
    })
    afterAll(() => runtime.dispose())

    const tools = { echo: async (args: unknown) => args as null }

    it.each(['undefined', 'NaN', 'Infinity', 'globalThis'])('is refused with a TypeError naming the binding global %s', async (name) => {
      const run = runtime.run('return 1', { bindings: [{ global: name, functions: tools }] })
      await expect(run).rejects.toThrow(TypeError)
      await expect(run).rejects.toThrow(`binding global "${name}" names a global of the JavaScript realm that cannot be replaced`)
    })

    it('is refused with a TypeError naming an error class called NaN', async () => {
      const run = runtime.run('return 1', {
        bindings: [{ global: 'tools', functions: tools, errorClass: { name: 'NaN', memberNameProperty: 'tool' } }],
      })
      await expect(run).rejects.toThrow(TypeError)
      await expect(run).rejects.toThrow('binding error class "NaN" names a global of the JavaScript realm')
    })

    it('may replace a configurable Node global such as crypto', async () => {
      const result = await runtime.run('return await crypto.echo({ ok: true })', {
        bindings: [{ global: 'crypto', functions: tools }],
      })
      expect(result).toEqual({ output: [], value: { ok: true }, sandbox: CONFINED })
    })
  })
})
