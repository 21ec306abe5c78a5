import { describe, expect, it } from 'vitest'
import type { PtcProgramFormat } from 'ptc-runtime'
import { leakedSince, resourceBaseline } from '../helpers/leaks.js'
import { CONFINED, startRuntime, textOf } from '../helpers/runtime.js'

const withRuntime = async (format: PtcProgramFormat, body: (env: Awaited<ReturnType<typeof startRuntime>>) => Promise<void>, config = {}) => {
  const env = await startRuntime({ programFormat: format, retainState: true, timeoutMs: 10_000, ...config })
  try {
    await body(env)
  } finally {
    await env.dispose()
  }
}

describe('retained state', () => {
  it('describes retention and the format', async () => {
    await withRuntime('repl', async ({ runtime }) => {
      expect(runtime.retainsState).toBe(true)
      expect(runtime.programFormat).toBe('repl')
      expect(runtime.executionInstructions).toMatch(/persist between calls/)
    })
  })

  it('function-body keeps globals for one owner and isolates owners', async () => {
    await withRuntime('function-body', async ({ run }) => {
      const alice = {}
      const bob = {}
      await run('globalThis.counter = 41', { stateOwner: alice })
      expect((await run('return ++counter', { stateOwner: alice })).value).toBe(42)
      expect((await run('return typeof counter', { stateOwner: bob })).value).toBe('undefined')
      expect((await run('return typeof counter')).value).toBe('undefined')
    })
  })

  it('runs for one owner are queued in arrival order', async () => {
    await withRuntime('function-body', async ({ run }) => {
      const owner = {}
      await run('globalThis.log = []', { stateOwner: owner })
      const runs = [0, 1, 2, 3].map((i) => run(`await new Promise((r) => setTimeout(r, ${40 - i * 10})); log.push(${i}); return log.slice()`, { stateOwner: owner }))
      const results = await Promise.all(runs)
      expect(results.at(-1)?.value).toEqual([0, 1, 2, 3])
    })
  })

  it('a timeout discards the environment and the next run says so first', async () => {
    await withRuntime('function-body', async ({ run }) => {
      const owner = {}
      await run('globalThis.kept = 1', { stateOwner: owner })
      expect((await run('while (true) {}', { stateOwner: owner, timeoutMs: 300 })).error?.kind).toBe('timeout')
      const next = await run('return typeof kept', { stateOwner: owner })
      expect(next.value).toBe('undefined')
      expect(next.output[0]).toEqual({ type: 'text', text: expect.stringMatching(/^\[earlier state was lost because it ran out of time/) })
      expect((await run('return 1', { stateOwner: owner })).output).toEqual([])
    })
  })

  it('an exception keeps the environment', async () => {
    await withRuntime('function-body', async ({ run }) => {
      const owner = {}
      await run('globalThis.kept = 1; throw new Error("oops")', { stateOwner: owner })
      expect(await run('return kept', { stateOwner: owner })).toEqual({ calls: [], output: [], value: 1, sandbox: CONFINED })
    })
  })

  it('release aborts the owner run in progress and ends its environment', async () => {
    const baseline = await resourceBaseline()
    await withRuntime('function-body', async ({ run, runtime }) => {
      const owner = {}
      await run('globalThis.kept = 1', { stateOwner: owner })
      const pending = run('while (true) {}', { stateOwner: owner, timeoutMs: null })
      await new Promise((resolve) => setTimeout(resolve, 200))
      await runtime.release(owner)
      expect((await pending).error?.kind).toBe('abort')
      expect((await run('return typeof kept', { stateOwner: owner })).value).toBe('undefined')
      await runtime.release({})
    }, { poolSize: 0 })
    expect(await leakedSince(baseline)).toEqual({ threads: 0, children: [], descriptors: 0 })
  })

  it('an idle environment is released after idleMs', async () => {
    await withRuntime('function-body', async ({ run }) => {
      const owner = {}
      await run('globalThis.kept = 1', { stateOwner: owner })
      await new Promise((resolve) => setTimeout(resolve, 400))
      expect((await run('return typeof kept', { stateOwner: owner })).value).toBe('undefined')
    }, { idleMs: 100 })
  })
})

describe('an environment a program made unusable', () => {
  it('fails the next run with a clear message and gives the one after a fresh environment', async () => {
    await withRuntime('function-body', async ({ run }) => {
      const tools = { global: 'tools', functions: { echo: async (value: unknown) => value as never } }
      const owner = {}
      expect((await run('Object.freeze(globalThis); return await tools.echo("frozen")', { stateOwner: owner, bindings: [tools] })).value).toBe('frozen')
      const next = await run('return await tools.echo(1)', { stateOwner: owner, bindings: [tools] })
      expect(next.error).toEqual({
        kind: 'exception',
        message: "this environment can no longer take the run's tool bindings (an earlier program froze or sealed the global object, or fixed a binding's name); the next run starts in a fresh environment",
      })
      const after = await run('return [Object.isFrozen(globalThis), await tools.echo(2)]', { stateOwner: owner, bindings: [tools] })
      expect(after.value).toEqual([false, 2])
      expect(textOf(after)).toMatch(/^\[earlier state was lost because its environment became unusable; this run starts in a fresh environment\]\n$/)
    })
  })
})

describe('the environment initializer', () => {
  it('runs once per new environment with the bindings installed, its completion discarded', async () => {
    await withRuntime('function-body', async ({ runtime, run }) => {
      runtime.registerEnvironmentInitializer('globalThis.boot = (globalThis.boot ?? 0) + 1; globalThis.first = await tools.first(); console.log("booted"); return "ignored"')
      const tools = { global: 'tools', functions: { first: async () => 'from host' } }
      const owner = {}
      const one = await run('return [boot, first]', { stateOwner: owner, bindings: [tools] })
      expect(one).toEqual({ calls: [expect.objectContaining({ tool: 'tools.first', outcome: 'ok' })], output: [{ type: 'text', text: 'booted\n' }], value: [1, 'from host'], sandbox: CONFINED })
      expect((await run('return boot', { stateOwner: owner, bindings: [tools] })).value).toBe(1)
      expect((await run('return boot', { bindings: [tools] })).value).toBe(1)
    })
  })

  it('a failing initializer fails the run and the program does not run', async () => {
    await withRuntime('function-body', async ({ runtime, run }) => {
      runtime.registerEnvironmentInitializer('throw new Error("bad init")')
      const result = await run('console.log("program ran")')
      expect(result.error?.kind).toBe('exception')
      expect(result.error?.message).toMatch(/bad init/)
      expect(textOf(result)).toBe('')
    })
  })

  it('an initializer that throws a hostile value, or lets a hostile tool rejection escape, fails the run and the host serves the next', async () => {
    const tools = {
      global: 'tools',
      functions: {
        reject: async () => {
          throw new Proxy(new Error('proxied'), { get: () => { throw new Error('the rejection ran code') } })
        },
      },
    }
    for (const initializer of ['throw new Proxy(new Error("x"), { get() { throw 1 }, getPrototypeOf() { throw 2 } })', 'await tools.reject()']) {
      await withRuntime('function-body', async ({ runtime, run }) => {
        runtime.registerEnvironmentInitializer(initializer)
        const result = await run('console.log("program ran")', { bindings: [tools] })
        expect(result.error?.kind).toBe('exception')
        expect(result.error?.message).toMatch(/^the environment initializer failed: /)
        expect(textOf(result)).toBe('')
      })
    }
  })

  it('after a state owner\'s initializer failed, the next run retries in a fresh environment without a lost-state notice', async () => {
    await withRuntime('function-body', async ({ runtime, run }) => {
      runtime.registerEnvironmentInitializer('globalThis.attempt = (globalThis.attempt ?? 0) + 1; if (!globalThis.ready) throw new Error("bad init")')
      const owner = {}
      const first = await run('return "program ran"', { stateOwner: owner })
      expect(first.error?.message).toMatch(/the environment initializer failed: Error: bad init/)
      const second = await run('return attempt', { stateOwner: owner })
      expect(second.output).toEqual([])
      expect(second.error?.message).toMatch(/bad init/)
    })
  })

  it('refuses a second, a late, or an unparsable registration', async () => {
    await withRuntime('function-body', async ({ runtime, run }) => {
      expect(() => runtime.registerEnvironmentInitializer('const = 1')).toThrow(/SyntaxError/)
      runtime.registerEnvironmentInitializer('1')
      expect(() => runtime.registerEnvironmentInitializer('2')).toThrow(/already registered/)
    })
    await withRuntime('function-body', async ({ runtime, run }) => {
      await run('return 1')
      expect(() => runtime.registerEnvironmentInitializer('1')).toThrow(/before the first run/)
    })
  })

  it('the disposer is idempotent, aborts admitted runs and releases environments', async () => {
    await withRuntime('function-body', async ({ runtime, run }) => {
      const dispose = runtime.registerEnvironmentInitializer('globalThis.boot = true')
      const owner = {}
      await run('globalThis.kept = 1', { stateOwner: owner })
      const pending = run('while (true) {}', { timeoutMs: null })
      await new Promise((resolve) => setTimeout(resolve, 200))
      await Promise.all([dispose(), dispose()])
      expect((await pending).error).toEqual({ kind: 'abort', message: 'the environment initializer was unregistered' })
      expect((await run('return [typeof boot, typeof kept]', { stateOwner: owner })).value).toEqual(['undefined', 'undefined'])
    })
  })
})
