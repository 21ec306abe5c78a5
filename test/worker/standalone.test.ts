import { Context } from 'cordis'
import { describe, expect, it } from 'vitest'
import { createPtcRuntime, type WorkerPtcRuntimeOptions } from 'ptc-runtime'
import { WorkerPtcRuntime } from 'ptc-runtime/cordis'
import { leakedSince, resourceBaseline } from '../helpers/leaks.js'
import { childProcesses } from '../helpers/processes.mjs'
import { CONFINED } from '../helpers/runtime.js'

/** The rejection of plugging `config` into a Cordis app directly, as the plugin's users see it. */
async function pluginError(config: WorkerPtcRuntimeOptions): Promise<unknown> {
  const fiber = new Context().plugin(WorkerPtcRuntime, config)
  try {
    await fiber
  } catch (error) {
    return error
  } finally {
    await fiber.dispose()
  }
  throw new Error('the plugin accepted the config')
}

describe('createPtcRuntime, without a Cordis app', () => {
  it('runs a program in a helper process, and dispose leaves no helper, thread or descriptor', async () => {
    const baseline = await resourceBaseline()
    const { runtime, dispose } = await createPtcRuntime({ poolSize: 1 })
    const result = await runtime.run(runtime.resolve({
      program: 'console.log(await math.add({ a: 2, b: 3 })); return process.pid !== undefined',
      bindings: [{ global: 'math', functions: { add: async (args) => { const { a, b } = args as { a: number; b: number }; return a + b } } }],
    }))
    expect(result).toMatchObject({ value: true, output: [{ type: 'text', text: '5\n' }], sandbox: CONFINED })
    expect(childProcesses().length).toBeGreaterThan(baseline.children.length)
    await dispose()
    expect(await leakedSince(baseline)).toEqual({ threads: 0, children: [], descriptors: 0 })
  })

  it('dispose is idempotent: every call awaits the same disposal, and the runtime refuses work after it', async () => {
    const { runtime, dispose } = await createPtcRuntime({ isolation: 'thread', poolSize: 1 })
    const running = runtime.run(runtime.resolve({ program: 'await new Promise(() => {})', bindings: [], timeoutMs: null }))
    const [first, second] = [dispose(), dispose()]
    expect(second).toBe(first)
    await Promise.all([first, second, dispose()])
    expect((await running).error).toEqual({ kind: 'abort', message: 'runtime disposed' })
    expect(() => runtime.resolve({ program: 'return 1', bindings: [] })).toThrow(/after disposal/)
  })

  it.each<[string, WorkerPtcRuntimeOptions]>([
    ['a value the schema refuses', { poolSize: -1 }],
    ['an option that does not exist', { poolSzie: 2 } as WorkerPtcRuntimeOptions],
    ['a relative cwd', { cwd: 'relative/dir' }],
  ])('rejects %s with the same message the plugin gives, leaving nothing running', async (_, config) => {
    const baseline = await resourceBaseline()
    const expected = await pluginError(config)
    await expect(createPtcRuntime(config)).rejects.toThrow((expected as Error).message)
    expect(await leakedSince(baseline)).toEqual({ threads: 0, children: [], descriptors: 0 })
  })
})
