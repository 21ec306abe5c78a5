import { type ToolExecutionOptions, jsonSchema, tool } from 'ai'
import { z } from 'zod'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type PtcRuntime, createPtcRuntime } from 'ptc-runtime'
import { AI_SDK_MAX_ARGUMENT_BYTES, fromAiSdkTools } from 'ptc-runtime/ai'

/** What each `execute` was called with, in call order. */
const seen: Array<{ tool: string; input: unknown; options: ToolExecutionOptions }> = []

// A user's existing tools, written for `generateText` and untouched here.
const tools = {
  price: tool({
    description: 'The price of one item, in cents.',
    inputSchema: z.object({ sku: z.string().describe('Stock-keeping unit'), currency: z.enum(['EUR', 'USD']).default('EUR') }),
    execute: async (input, options) => {
      seen.push({ tool: 'price', input, options })
      return { sku: input.sku, cents: input.sku.length * 100, currency: input.currency }
    },
  }),
  stock: tool({
    description: 'Units in stock per warehouse.',
    inputSchema: jsonSchema<{ skus: string[] }>({
      type: 'object',
      properties: { skus: { type: 'array', items: { type: 'string' } } },
      required: ['skus'],
      additionalProperties: false,
    }),
    execute: (input, options) => {
      seen.push({ tool: 'stock', input, options })
      return input.skus.map((sku) => ({ sku, units: 3 }))
    },
  }),
  progress: tool({
    inputSchema: z.object({}),
    async *execute() {
      yield 'started'
      yield 'halfway'
      yield 'finished'
    },
  }),
  wait: tool({
    inputSchema: z.object({}),
    execute: (_input, { abortSignal }) =>
      new Promise((resolve) => abortSignal!.addEventListener('abort', () => { aborted.push(abortSignal!.reason); resolve('aborted') })),
  }),
}
const aborted: unknown[] = []

describe('fromAiSdkTools', () => {
  let runtime: PtcRuntime
  let dispose: () => Promise<void>
  beforeAll(async () => ({ runtime, dispose } = await createPtcRuntime({ isolation: 'thread', poolSize: 1 })))
  afterAll(() => dispose())

  const run = async (program: string, timeoutMs: number | null = 10_000) => {
    const group = await fromAiSdkTools(tools, { global: 'shop', description: 'The shop.', errorClass: { name: 'ShopError', memberNameProperty: 'tool' } })
    return runtime.run(runtime.resolve({ program, bindings: [group.namespace], timeoutMs }))
  }

  it('runs a program that calls Zod and JSON-schema tools, each execute getting the parsed input and the SDK options', async () => {
    seen.length = 0
    const result = await run('const [p, s] = await Promise.all([shop.price({ sku: "abc" }), shop.stock({ skus: ["abc", "d"] })]); return { p, s }')
    expect(result.error).toBeUndefined()
    expect(result.value).toEqual({ p: { sku: 'abc', cents: 300, currency: 'EUR' }, s: [{ sku: 'abc', units: 3 }, { sku: 'd', units: 3 }] })
    // The Zod default applied, as the SDK's own parse would.
    expect(seen.find((entry) => entry.tool === 'price')?.input).toEqual({ sku: 'abc', currency: 'EUR' })
    for (const { options } of seen) {
      expect(options.toolCallId).toMatch(/^[0-9a-f-]{36}$/)
      expect(options.messages).toEqual([])
      expect(options.abortSignal).toBeInstanceOf(AbortSignal)
    }
    expect(new Set(seen.map(({ options }) => options.toolCallId)).size).toBe(2)
  })

  it('refuses an argument that does not fit the schema before execute, with the JSON path, in the group error class', async () => {
    seen.length = 0
    const result = await run(`
      const failures = []
      for (const call of [() => shop.price({ sku: 7 }), () => shop.price({ sku: "a", currency: "GBP" }), () => shop.stock({ skus: ["a", 2] }), () => shop.stock({ skus: [], extra: 1 })]) {
        try { await call() } catch (error) { failures.push(error.name + " " + error.tool + ": " + error.message) }
      }
      return failures`)
    expect(result.value).toEqual([
      'ShopError price: shop.price: invalid arguments: $.sku must be string',
      'ShopError price: shop.price: invalid arguments: $.currency must be one of "EUR", "USD"',
      'ShopError stock: shop.stock: invalid arguments: $.skus[1] must be string',
      'ShopError stock: shop.stock: invalid arguments: $.extra is not allowed (no such property)',
    ])
    expect(result.calls?.map((call) => call.outcome)).toEqual(['refused', 'refused', 'refused', 'refused'])
    expect(seen).toEqual([])
  })

  it('refuses what only the schema itself checks by its first issue and how many follow', async () => {
    const checked = await fromAiSdkTools({ visit: tool({ inputSchema: z.object({ urls: z.array(z.url()) }), execute: async ({ urls }) => urls.length }) }, { global: 'checked' })
    const program = `
      const failures = []
      for (const call of [() => checked.visit({ urls: ['x', 'https://example.com', 'y'] }), () => checked.visit({ urls: ['https://example.com', 'z'] })]) {
        try { await call() } catch (error) { failures.push(error.message) }
      }
      return failures`
    const result = await runtime.run(runtime.resolve({ program, bindings: [checked.namespace], timeoutMs: 30_000 }))
    expect(result.value).toEqual([
      'checked.visit: invalid arguments: $.urls[0]: Invalid URL (and 1 more issue)',
      'checked.visit: invalid arguments: $.urls[1]: Invalid URL',
    ])
    expect(result.calls?.map((call) => call.outcome)).toEqual(['refused', 'refused'])
  })

  it('refuses an argument over maxArgumentBytes (256 KiB unless set) before the schema parses it', async () => {
    const visit = { visit: tool({ inputSchema: z.object({ urls: z.array(z.url()) }), execute: async ({ urls }: { urls: string[] }) => urls.length }) }
    // A million failing items: Zod would keep an issue for each on the host.
    const program = "try { return await checked.visit({ urls: new Array(1_000_000).fill('x') }) } catch (error) { return error.message }"
    const runWith = async (options: { maxArgumentBytes?: number }) => {
      const checked = await fromAiSdkTools(visit, { global: 'checked', ...options })
      return runtime.run(runtime.resolve({ program, bindings: [checked.namespace], timeoutMs: 30_000 }))
    }
    const bounded = await runWith({})
    expect(bounded.value).toBe(`checked.visit: its argument is 4000010 JSON bytes, over the tool's maxArgumentBytes of ${AI_SDK_MAX_ARGUMENT_BYTES}; pass less per call`)
    expect(bounded.calls?.map((call) => call.outcome)).toEqual(['refused'])
    const raised = await runWith({ maxArgumentBytes: 8 * 1024 * 1024 })
    // Past the size bound, the parse of a million failing items runs, and is stopped at its deadline.
    expect(raised.value).toBe('checked.visit: invalid arguments: checking them against the input schema took over 250 ms, and was stopped; pass fewer or simpler items in one call')
  })

  it('refuses an argument deep enough to overflow the schema itself, rather than failing the tool', async () => {
    const Tree: z.ZodType<{ child?: unknown }> = z.lazy(() => z.object({ child: Tree.optional() }))
    const checked = await fromAiSdkTools({ walk: tool({ inputSchema: Tree, execute: async () => 'walked' }) }, { global: 'checked' })
    // Deep enough for Zod's recursion, within the JSON Schema check's.
    const program = `
      let deep = {}
      for (let i = 0; i < 3000; i++) deep = { child: deep }
      try { return await checked.walk(deep) } catch (error) { return error.message }`
    const result = await runtime.run(runtime.resolve({ program, bindings: [checked.namespace], timeoutMs: 30_000 }))
    expect(result.value).toBe('checked.walk: invalid arguments: the schema could not check them (Maximum call stack size exceeded); pass a smaller or shallower argument')
    expect(result.calls?.map((call) => call.outcome)).toEqual(['refused'])
  })

  it('resolves a streaming tool with the last value it yielded', async () => {
    expect((await run('return await shop.progress()')).value).toBe('finished')
  })

  it('aborts execute through its abortSignal when the run times out', async () => {
    aborted.length = 0
    const result = await run('await shop.wait({})', 300)
    expect(result.error?.kind).toBe('timeout')
    expect(aborted).toHaveLength(1)
  })

  it("takes the group's maxSchemaCheckMsPerRun, a positive integer, as the run's budget of schema checking", async () => {
    const tight = await fromAiSdkTools(tools, { global: 'shop', maxSchemaCheckMsPerRun: 40 })
    seen.length = 0
    // A run that has spent 50 ms of checks already; an argument of unknown size is checked as a large one.
    const call = { signal: new AbortController().signal, hold: async () => undefined, argumentBytes: Number.POSITIVE_INFINITY, ledger: { schemaCheckMs: 50 } }
    await expect(tight.namespace.functions.stock!({ skus: ['abc'] }, call)).rejects.toThrow(
      "shop.stock: checking this run's arguments against input schemas has taken 50 ms of the host's thread, reaching its budget of 40 ms (maxSchemaCheckMsPerRun)",
    )
    expect(seen).toEqual([])
    await expect(fromAiSdkTools(tools, { global: 'shop', maxSchemaCheckMsPerRun: 1.5 })).rejects.toThrow('tool group "shop": maxSchemaCheckMsPerRun must be a positive integer (ms), got 1.5')
  })

  it('declares each tool from its converted schema, with its description', async () => {
    const group = await fromAiSdkTools(tools, { global: 'shop' })
    expect(group.declarations).toContain('The price of one item, in cents.')
    expect(group.declarations).toMatch(/price\(args: \{[^}]*sku: string/)
    expect(group.declarations).toMatch(/currency\?: "EUR" \| "USD"/)
    expect(group.declarations).toMatch(/stock\(args: \{[^}]*skus: string\[\]/)
    expect(group.tools.map((member) => member.name)).toEqual(['shop.price', 'shop.stock', 'shop.progress', 'shop.wait'])
  })

  it('refuses a tool without execute, naming it', async () => {
    const clientSide = { ask: tool({ description: 'Asks the user.', inputSchema: z.object({ question: z.string() }) }) }
    await expect(fromAiSdkTools({ ...tools, ...clientSide }, { global: 'shop' })).rejects.toThrow('fromAiSdkTools "shop": tool "ask" has no execute function')
  })

  it('refuses a global that would shadow a built-in, as defineToolGroup does', async () => {
    await expect(fromAiSdkTools(tools, { global: 'JSON' })).rejects.toThrow(/JSON/)
  })
})

// Tools as AI SDK users write them: one sends and returns nothing, one answers a Date, one leaves an optional field undefined.
const asWritten = {
  send: tool({ inputSchema: z.object({ to: z.string() }), execute: async () => undefined }),
  lastLogin: tool({ inputSchema: z.object({}), execute: async () => new Date(Date.UTC(2026, 4, 6)) }),
  profile: tool({ inputSchema: z.object({}), execute: async () => ({ name: 'Ada', nickname: undefined as string | undefined }) }),
}

describe.each([
  ['the thread tier', { isolation: 'thread' as const }],
  ['the default confined tier', {}],
])('fromAiSdkTools with tools as written, on %s', (_tier, config) => {
  let runtime: PtcRuntime
  let dispose: () => Promise<void>
  beforeAll(async () => ({ runtime, dispose } = await createPtcRuntime({ ...config, poolSize: 1 })))
  afterAll(() => dispose())

  it('serves a program a tool that returns nothing, a Date and an object with an undefined field', async () => {
    const group = await fromAiSdkTools(asWritten, { global: 'account' })
    const result = await runtime.run(runtime.resolve({
      program: `const sent = await account.send({ to: 'ada@example.org' })
        return { sent: sent === undefined, login: await account.lastLogin(), profile: await account.profile() }`,
      bindings: [group.namespace],
    }))
    expect(result.error).toBeUndefined()
    expect(result.value).toEqual({ sent: true, login: '2026-05-06T00:00:00.000Z', profile: { name: 'Ada' } })
  })
})
