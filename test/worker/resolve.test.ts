import { Context } from 'cordis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { WorkerPtcRuntime } from 'ptc-runtime/cordis'
import { ON_CONTAINER, startRuntime } from '../helpers/runtime.js'

describe('WorkerPtcRuntime configuration and resolve', () => {
  let env: Awaited<ReturnType<typeof startRuntime>>
  beforeAll(async () => {
    env = await startRuntime({ timeoutMs: 5000, maxTimeoutMs: 20_000, poolSize: 0 })
  })
  afterAll(() => env.dispose())

  // The defaults of the process tier.
  it.skipIf(ON_CONTAINER)('describes itself through the seam descriptors', () => {
    const { runtime } = env
    expect(runtime.language).toBe('javascript')
    expect(runtime.isolation).toBe('process')
    expect(runtime.programFormat).toBe('function-body')
    expect(runtime.retainsState).toBe(false)
    expect(runtime.sandboxMode).toBe('workspace-write')
    expect(runtime.timeout).toEqual({ defaultMs: 5000, maxMs: 20_000 })
    expect(runtime.executionInstructions).toMatch(/async JavaScript function/)
  })

  it.skipIf(ON_CONTAINER)('applies the default timeout, the default confinement and its private scratch directory as cwd', () => {
    const spec = env.runtime.resolve({ program: '', bindings: [] })
    expect(spec).toMatchObject({ timeoutMs: 5000, sandboxPolicy: { mode: 'workspace-write', workspaceRoot: spec.cwd, network: 'none' } })
    expect(spec.cwd).not.toBe(process.cwd())
  })

  it('caps a timeout at the maximum and keeps null', () => {
    expect(env.runtime.resolve({ program: '', bindings: [], timeoutMs: 999_999 }).timeoutMs).toBe(20_000)
    expect(env.runtime.resolve({ program: '', bindings: [], timeoutMs: null }).timeoutMs).toBeNull()
  })

  it.each([0, -1, Number.NaN, Number.POSITIVE_INFINITY, '5'])('rejects the timeout %s', (timeoutMs) => {
    expect(() => env.runtime.resolve({ program: '', bindings: [], timeoutMs: timeoutMs as number })).toThrow(
      /timeoutMs must be a positive finite number or null/,
    )
  })

  // The container tier refuses any request cwd (test/tiers/container.test.ts).
  it.skipIf(ON_CONTAINER)('rejects a relative or missing cwd', () => {
    expect(() => env.runtime.resolve({ program: '', bindings: [], cwd: 'relative' })).toThrow(/cwd must be an absolute path/)
    expect(() => env.runtime.resolve({ program: '', bindings: [], cwd: '/definitely/not/here' })).toThrow(/existing directory/)
  })

  it("with sandbox: 'none', runs in the host's cwd and refuses an explicit sandbox policy", async () => {
    const unconfined = await startRuntime({ poolSize: 0, sandbox: 'none' })
    try {
      expect(unconfined.runtime.sandboxMode).toBeUndefined()
      expect(unconfined.runtime.resolve({ program: '', bindings: [] })).toMatchObject({ cwd: process.cwd() })
      expect(() =>
        unconfined.runtime.resolve({ program: '', bindings: [], sandboxPolicy: { mode: 'read-only', workspaceRoot: '/tmp' } }),
      ).toThrow(/sandboxPolicy is unsupported/)
    } finally {
      await unconfined.dispose()
    }
  })

  it('run rejects an unresolved spec and one over the maximum', async () => {
    await expect(env.runtime.run({ program: '1', bindings: [] } as never)).rejects.toThrow(/spec.cwd must be an absolute path/)
    await expect(env.runtime.run({ program: '1', bindings: [], cwd: '/', timeoutMs: 50_000 })).rejects.toThrow(/exceeds maxTimeoutMs/)
  })

  it('run rejects invalid binding names, naming the name and the rule', async () => {
    const spec = env.runtime.resolve({ program: '', bindings: [{ global: '$tools', functions: {} }] })
    await expect(env.runtime.run(spec)).rejects.toThrow('binding global "$tools" must match')
  })

  it('a pre-aborted signal resolves abort with the reason', async () => {
    const controller = new AbortController()
    controller.abort(new Error('user pressed stop'))
    const result = await env.run('return 1', { signal: controller.signal })
    expect(result).toEqual({ calls: [], output: [], error: { kind: 'abort', message: 'user pressed stop' }, sandbox: expect.anything() })
  })

  it('a syntax error resolves exception with the line and column of the program', async () => {
    const result = await env.run('const a = 1\nconst b = ;\nreturn a')
    expect(result.error?.kind).toBe('exception')
    expect(result.error?.message).toMatch(/SyntaxError/)
    expect(result.error?.message).toMatch(/line 2, column 11/)
  })
})

describe('WorkerPtcRuntime config validation', () => {
  it.each([
    [{ timeoutMs: -1 }, /timeoutMs/],
    [{ maxTimeoutMs: 2_147_483_648 }, /maxTimeoutMs/],
    [{ maxOutputBytes: 3 }, /maxOutputBytes/],
    [{ cwd: 'relative/dir' }, /config.cwd must be an absolute path/],
  ])('refuses %j at plugin load', async (config, pattern) => {
    const root = new Context()
    await expect(root.plugin(WorkerPtcRuntime, config as never)).rejects.toThrow(pattern)
    await root.fiber.dispose()
  })

  it('resolve and run throw after disposal', async () => {
    const { runtime, dispose } = await startRuntime({ poolSize: 0 })
    const spec = runtime.resolve({ program: 'return 1', bindings: [] })
    await dispose()
    expect(() => runtime.resolve({ program: '', bindings: [] })).toThrow(/after disposal/)
    await expect(runtime.run(spec)).rejects.toThrow(/after disposal/)
  })
})
