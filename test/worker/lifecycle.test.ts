import { describe, expect, it } from 'vitest'
import { leakedSince, resourceBaseline } from '../helpers/leaks.js'
import { startRuntime } from '../helpers/runtime.js'

describe('provider lifecycle', () => {
  it('disposal aborts in-flight runs with "runtime disposed" and awaits every worker', async () => {
    const baseline = await resourceBaseline()
    const env = await startRuntime({ poolSize: 2 })
    const runs = [env.run('while (true) {}', { timeoutMs: null }), env.run('await new Promise(() => {})', { timeoutMs: null })]
    await new Promise((resolve) => setTimeout(resolve, 200))
    await env.dispose()
    for (const result of await Promise.all(runs)) {
      expect(result.error).toEqual({ kind: 'abort', message: 'runtime disposed' })
    }
    expect(await leakedSince(baseline)).toEqual({ threads: 0, children: [], descriptors: 0 })
  })

  it('settles each run exactly once even when the program exits right after completing', async () => {
    const env = await startRuntime()
    const results = await Promise.all(
      Array.from({ length: 5 }, () => env.run('setImmediate(() => process.exit(3)); return "done"')),
    )
    for (const result of results) expect(result).toEqual({ output: [], value: 'done' })
    await env.dispose()
  })

  it('the pool never keeps the process alive', async () => {
    const { execFileSync } = await import('node:child_process')
    const script = `
      import { Context } from 'cordis'
      import { WorkerPtcRuntime } from 'ptc-runtime'
      const root = new Context()
      await root.plugin(WorkerPtcRuntime, { poolSize: 2 })
      const r = await root.ptcRuntime.run(root.ptcRuntime.resolve({ program: 'return 1', bindings: [] }))
      console.log(JSON.stringify(r))`
    const output = execFileSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8', timeout: 20_000 })
    expect(output.trim()).toBe('{"output":[],"value":1}')
  })
})
