import { Context } from 'cordis'
import { describe, expect, it } from 'vitest'
import { type PtcRunRequest, type PtcRunResult, type PtcRunSpec } from 'ptc-runtime'
import { PtcRuntime } from 'ptc-runtime/cordis'

/** The smallest honest provider: echoes the program text as output. */
class EchoRuntime extends PtcRuntime {
  readonly language = 'javascript'
  readonly isolation = 'none'
  stopped = false

  resolve(request: PtcRunRequest): PtcRunSpec {
    return { ...request, cwd: request.cwd ?? '/', timeoutMs: request.timeoutMs ?? 1000 }
  }

  async run(spec: PtcRunSpec): Promise<PtcRunResult> {
    return { output: [{ type: 'text', text: spec.program }], calls: [] }
  }

  protected override async stop() {
    this.stopped = true
  }
}

describe('the ptcRuntime service', () => {
  it('a provider registered with ctx.plugin serves resolve and run', async () => {
    const root = new Context()
    await root.plugin(EchoRuntime)
    const spec = root.ptcRuntime.resolve({ program: 'hi', bindings: [] })
    expect(spec).toMatchObject({ cwd: '/', timeoutMs: 1000 })
    expect(await root.ptcRuntime.run(spec)).toEqual({ output: [{ type: 'text', text: 'hi' }], calls: [] })
    await root.fiber.dispose()
  })

  it('has the seam defaults for optional members', async () => {
    const root = new Context()
    await root.plugin(EchoRuntime)
    const runtime = root.ptcRuntime
    expect(runtime.programFormat).toBe('function-body')
    expect(runtime.retainsState).toBe(false)
    expect(runtime.executionInstructions).toBe('')
    expect(runtime.sandboxMode).toBeUndefined()
    expect(runtime.timeout).toBeUndefined()
    await expect(runtime.release({})).resolves.toBeUndefined()
    expect(() => runtime.registerEnvironmentInitializer('1')).toThrow(/does not support/)
    await root.fiber.dispose()
  })

  it('refuses a second provider in the same context', async () => {
    const root = new Context()
    await root.plugin(EchoRuntime)
    await expect(root.plugin(EchoRuntime)).rejects.toThrow(/registered/)
    await root.fiber.dispose()
  })

  it('disposing the provider fiber removes the service and awaits its stop', async () => {
    const root = new Context()
    const fiber = await root.plugin(EchoRuntime)
    const runtime = root.get('ptcRuntime') as EchoRuntime
    await fiber.dispose()
    expect(runtime.stopped).toBe(true)
    expect(root.get('ptcRuntime')).toBeUndefined()
  })

  it('a consumer injecting ptcRuntime is blocked without a provider and comes back with one', async () => {
    const root = new Context()
    const seen: string[] = []
    root.inject(['ptcRuntime'], async (ctx) => {
      const result = await ctx.ptcRuntime.run(ctx.ptcRuntime.resolve({ program: 'ping', bindings: [] }))
      seen.push((result.output[0] as { text: string }).text)
    })
    expect(seen).toEqual([])
    const first = await root.plugin(EchoRuntime)
    await new Promise((resolve) => setImmediate(resolve))
    expect(seen).toEqual(['ping'])
    await first.dispose()
    await root.plugin(EchoRuntime)
    await new Promise((resolve) => setImmediate(resolve))
    expect(seen).toEqual(['ping', 'ping'])
    await root.fiber.dispose()
  })
})
