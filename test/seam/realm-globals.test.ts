import vm from 'node:vm'
import { Worker } from 'node:worker_threads'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { FIXED_REALM_GLOBALS, PORTABLE_RESERVED_WORDS, REALM_BUILTIN_GLOBALS, RESERVED_BINDING_GLOBALS } from '../../src/seam/names.js'
import { defineToolGroup, validateBindings } from 'ptc-runtime'
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

    it('covers every global a program sees in its realm', async () => {
      const { value } = await runtime.run('return Reflect.ownKeys(globalThis).filter((key) => typeof key === "string")')
      const covered = (name: string) =>
        FIXED_REALM_GLOBALS.has(name) || REALM_BUILTIN_GLOBALS.has(name) || RESERVED_BINDING_GLOBALS.has(name) || PORTABLE_RESERVED_WORDS.has(name)
      expect(value).toEqual(expect.arrayContaining(['JSON', 'fetch', 'process', 'Buffer']))
      expect((value as string[]).filter((name) => !covered(name))).toEqual([])
    })

    it.each(['JSON', 'Promise', 'Object', 'Math', 'Array', 'fetch', 'process', 'Buffer', 'crypto', 'setTimeout'])(
      'is refused at run time with a TypeError naming the built-in %s',
      async (name) => {
        const run = runtime.run('return 1', { bindings: [{ global: name, functions: tools }] })
        await expect(run).rejects.toThrow(TypeError)
        await expect(run).rejects.toThrow(`binding global "${name}" would replace the built-in global ${name} that programs rely on`)
      },
    )

    it('is refused as an error class named after a built-in error', async () => {
      const run = runtime.run('return 1', {
        bindings: [{ global: 'tools', functions: tools, errorClass: { name: 'TypeError', memberNameProperty: 'tool' } }],
      })
      await expect(run).rejects.toThrow('binding error class "TypeError" would replace the built-in global TypeError')
    })
  })

  it('refuses a built-in as a tool group global when the group is defined', () => {
    const tools = { get: { inputSchema: { type: 'object' }, run: () => null } } as const
    expect(() => defineToolGroup({ global: 'JSON', tools })).toThrow('binding global "JSON" would replace the built-in global JSON')
  })

  it('accepts a name a global only inherits, such as hasOwnProperty', () => {
    expect(() => validateBindings([{ global: 'hasOwnProperty', functions: {} }])).not.toThrow()
  })
})
