import { AsyncLocalStorage } from 'node:async_hooks'
import { type Context, ROOT_CONTEXT, type Span, context, trace } from '@opentelemetry/api'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createRunCodeTool, defineToolGroup } from 'ptc-runtime'
import { startRuntime } from '../helpers/runtime.js'

/** Spans as an exporter would see them: name, parent, attributes, status. */
interface Recorded {
  name: string
  parent: Recorded | undefined
  attributes: Record<string, unknown>
  status?: { code: number; message?: string }
  ended: boolean
}

const recorded: Recorded[] = []
let activeDuringTool: Recorded | undefined

function recordingSpan(entry: Recorded): Span {
  const span = {
    entry,
    spanContext: () => ({ traceId: '1'.repeat(32), spanId: String(recorded.length).padStart(16, '0'), traceFlags: 1 }),
    setAttribute: (key: string, value: unknown) => ((entry.attributes[key] = value), span),
    setAttributes: (attributes: Record<string, unknown>) => (Object.assign(entry.attributes, attributes), span),
    setStatus: (status: { code: number; message?: string }) => ((entry.status = status), span),
    end: () => void (entry.ended = true),
    isRecording: () => true,
    addEvent: () => span,
    addLink: () => span,
    addLinks: () => span,
    updateName: () => span,
    recordException: () => undefined,
  }
  return span as unknown as Span
}

const recordedOf = (span: Span | undefined) => (span as unknown as { entry: Recorded } | undefined)?.entry

beforeAll(() => {
  const storage = new AsyncLocalStorage<Context>()
  context.setGlobalContextManager({
    active: () => storage.getStore() ?? ROOT_CONTEXT,
    with: (ctx, fn, thisArg, ...args) => storage.run(ctx, () => fn.apply(thisArg, args)),
    bind: (_ctx, target) => target,
    enable() {
      return this
    },
    disable() {
      return this
    },
  })
  trace.setGlobalTracerProvider({
    getTracer: () => ({
      startSpan(name: string, options: { attributes?: Record<string, unknown> } = {}, ctx: Context = context.active()) {
        const entry: Recorded = { name, parent: recordedOf(trace.getSpan(ctx)), attributes: { ...options.attributes }, ended: false }
        recorded.push(entry)
        return recordingSpan(entry)
      },
      startActiveSpan: () => {
        throw new Error('not used')
      },
    }),
  } as never)
})

afterAll(() => {
  trace.disable()
  context.disable()
})

const tickets = defineToolGroup({
  global: 'tickets',
  errorClass: { name: 'TicketsError', memberNameProperty: 'tool' },
  tools: {
    create: {
      inputSchema: { type: 'object', properties: { title: { type: 'string' } }, required: ['title'] },
      run: ({ title }) => {
        activeDuringTool = recordedOf(trace.getActiveSpan())
        return { id: title.length }
      },
    },
    fail: { inputSchema: {}, run: () => Promise.reject(new Error('the tracker is down')) },
    hang: { inputSchema: {}, run: () => new Promise(() => {}) },
  },
})

describe('the call trace', () => {
  let env: Awaited<ReturnType<typeof startRuntime>>
  beforeAll(async () => {
    env = await startRuntime({ isolation: 'thread', timeoutMs: 10_000 })
  })
  afterAll(() => env.dispose())
  const run = (program: string, options = {}) => env.run(program, { bindings: [tickets.namespace], ...options })

  it('lists every call in start order with its outcome, offsets and byte sizes', async () => {
    const result = await run(`
      const first = await tickets.create({ title: 'abc' })
      const second = await tickets.fail().catch((error) => error.message)
      const refused = await tickets.create({}).catch((error) => error.message)
      return [first, second, refused]`)
    expect(result.value).toEqual([{ id: 3 }, 'the tracker is down', 'tickets.create: invalid arguments: $.title is required'])
    expect(result.calls).toEqual([
      { tool: 'tickets.create', startMs: expect.any(Number), durationMs: expect.any(Number), outcome: 'ok', argumentBytes: 15, resultBytes: 8 },
      { tool: 'tickets.fail', startMs: expect.any(Number), durationMs: expect.any(Number), outcome: 'error', error: 'the tracker is down', argumentBytes: 0 },
      { tool: 'tickets.create', startMs: expect.any(Number), durationMs: expect.any(Number), outcome: 'refused', error: 'tickets.create: invalid arguments: $.title is required', argumentBytes: 2 },
    ])
    const starts = result.calls.map((call) => call.startMs)
    expect(starts).toEqual([...starts].sort((a, b) => a - b))
    expect(starts[0]).toBeGreaterThanOrEqual(0)
  })

  it('is on a failed result too: calls that completed before an exception', async () => {
    const result = await run(`await tickets.create({ title: 'one' }); await tickets.create({ title: 'two' }); throw new Error('halfway')`)
    expect(result.error?.kind).toBe('exception')
    expect(result.calls.map((call) => [call.tool, call.outcome])).toEqual([['tickets.create', 'ok'], ['tickets.create', 'ok']])
  })

  it('records a call still running at the deadline as aborted', async () => {
    const result = await run(`await tickets.create({ title: 'one' }); await tickets.hang()`, { timeoutMs: 300 })
    expect(result.error?.kind).toBe('timeout')
    expect(result.calls).toMatchObject([
      { tool: 'tickets.create', outcome: 'ok' },
      { tool: 'tickets.hang', outcome: 'aborted', error: 'the run ended before this call settled' },
    ])
    expect(result.calls[1]!.durationMs).toBeGreaterThan(100)
  })

  it('reports calls the program started but never awaited', async () => {
    const result = await run(`tickets.hang(); tickets.create({ title: 'fire and forget' }); return 'done'`)
    expect(result.value).toBe('done')
    // Both calls reach the host, even though the program returned in the tick that made them.
    expect(result.calls.map((call) => call.tool)).toEqual(['tickets.hang', 'tickets.create'])
    expect(result.calls[0]).toMatchObject({ outcome: 'aborted', error: 'the program completed without awaiting this call' })
    // The quick one may or may not have answered before the result: either is reported.
    expect(['ok', 'aborted']).toContain(result.calls[1]!.outcome)
  })

  it('is empty for a run without calls, and for a program that does not parse', async () => {
    expect((await env.run('return 1')).calls).toEqual([])
    expect((await env.run('return (')).calls).toEqual([])
  })

  it('makes one span per run and one child span per call, with the tool running inside its span', async () => {
    recorded.length = 0
    await run(`await tickets.create({ title: 'traced' }); await tickets.fail().catch(() => null)`)
    const [runSpan, create, fail] = recorded
    expect(runSpan).toMatchObject({ name: 'ptc.run', parent: undefined, ended: true, attributes: { 'ptc.run.outcome': 'ok', 'ptc.run.calls': 2 } })
    expect(create).toMatchObject({
      name: 'execute_tool tickets.create',
      parent: runSpan,
      ended: true,
      attributes: { 'gen_ai.tool.name': 'tickets.create', 'ptc.call.outcome': 'ok', 'ptc.call.argument_bytes': 18, 'ptc.call.result_bytes': 8 },
    })
    expect(fail).toMatchObject({ parent: runSpan, attributes: { 'ptc.call.outcome': 'error' }, status: { code: 2, message: 'the tracker is down' } })
    expect(activeDuringTool).toBe(create)
    expect(recorded).toHaveLength(3)
  })

  it('the run span is a child of the caller active span', async () => {
    recorded.length = 0
    const outer = trace.getTracer('test').startSpan('agent.step')
    await context.with(trace.setSpan(context.active(), outer), () => run('return 1'))
    expect(recorded[1]).toMatchObject({ name: 'ptc.run', parent: recorded[0] })
  })

  it("the ready tool's text names the calls that completed before a failure", async () => {
    const tool = createRunCodeTool({ runtime: env.runtime, groups: [tickets] })
    const text = await tool.execute({ program: `await tickets.create({ title: 'a' }); await tickets.create({ title: 'b' }); await tickets.fail()` })
    expect(text).toBe(
      'Error (exception): TicketsError: the tracker is down\n' +
        '    at program:1:77\n' +
        'Calls that completed before the failure (their effects happened; do not repeat them): tickets.create ×2',
    )
  })
})
