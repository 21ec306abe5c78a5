import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type PtcBindingNamespace, defineToolGroup } from 'ptc-runtime'
import { startRuntime } from '../helpers/runtime.js'

/** Values a tool as people write it resolves, each as JSON.stringify takes it. */
const STRINGIFIABLE: Record<string, () => unknown> = {
  nothing: () => undefined,
  date: () => new Date(Date.UTC(2026, 0, 2, 3, 4, 5, 6)),
  invalidDate: () => new Date(Number.NaN),
  optionalField: () => ({ a: 1, b: undefined }),
  holes: () => [undefined, 1, , 3], // eslint-disable-line no-sparse-arrays
  nested: () => ({ when: { at: new Date(0), note: undefined }, list: [{ x: undefined, y: [new Date(1)] }] }),
  withToJSON: () => ({ toJSON: (key: string) => ({ serializedAs: key }) }),
  toJSONInside: () => ({ inner: { toJSON: (key: string) => `key ${key}` }, items: [{ toJSON: (key: string) => `index ${key}` }] }),
  bigintToJSON: () => ({ big: Object.assign(Object(10n), { toJSON: () => '10' }) }),
  boxed: () => [Object(1), Object('s'), Object(false)],
  negativeZero: () => ({ z: -0, list: [-0] }),
  instance: () => new (class Point { constructor(readonly x = 1, readonly y = 2) {} })(),
  map: () => ({ m: new Map([[1, 2]]) }),
  buffer: () => Buffer.from('hi'),
  protoKey: () => JSON.parse('{"__proto__": {"a": 1}, "b": 2}'),
  numericKeys: () => ({ b: 1, 2: 'two', a: 3, 1: 'one' }),
}

/** Values JSON.stringify loses or refuses: the call still fails, with today's message. */
const REFUSED: Record<string, [() => unknown, string]> = {
  func: [() => ({ a: 1, f: () => 1 }), 'function at $.f'],
  cycle: [() => { const a: Record<string, unknown> = {}; a.self = { a }; return a }, 'cycle at $.self.a'],
  bigint: [() => ({ n: 10n }), 'bigint at $.n'],
  nan: [() => ({ n: Number.NaN }), 'NaN at $.n'],
  infinity: [() => [1, Number.POSITIVE_INFINITY], 'Infinity at $[1]'],
  symbol: [() => ({ s: Symbol('x') }), 'symbol at $.s'],
  throwingToJSON: [() => ({ d: { toJSON: () => { throw new Error('no date') } } }), 'toJSON threw at $.d: no date'],
  throwingGetter: [() => ({ get g() { throw new Error('gone') } }), 'getter threw at $.g: gone'],
  proxy: [() => ({ p: new Proxy({}, {}) }), 'proxy at $.p'],
}

function toolsOf(entries: Record<string, () => unknown>) {
  return Object.fromEntries(Object.entries(entries).map(([name, make]) => [name, { inputSchema: { type: 'object' }, run: make }]))
}

const values = defineToolGroup({ global: 'values', tools: toolsOf(STRINGIFIABLE) })
const refused = defineToolGroup({
  global: 'refused',
  tools: toolsOf(Object.fromEntries(Object.entries(REFUSED).map(([name, [make]]) => [name, make]))),
})

let reads = 0
const huge = defineToolGroup({
  global: 'huge',
  tools: {
    // Every element a getter: the count says how far the host read before it stopped.
    strings: {
      inputSchema: { type: 'object' },
      maxResultBytes: 1000,
      run: () => {
        const list: unknown[] = []
        for (let index = 0; index < 100_000; index++) Object.defineProperty(list, index, { enumerable: true, get: () => (reads++, 'xxxxxxxxxx') })
        return list
      },
    },
    // Dropped fields write nothing, but reading them is bounded too.
    dropped: {
      inputSchema: { type: 'object' },
      maxResultBytes: 1000,
      run: () => {
        const record: Record<string, unknown> = {}
        for (let index = 0; index < 200_000; index++) Object.defineProperty(record, `k${index}`, { enumerable: true, get: () => (reads++, undefined) })
        return record
      },
    },
    // A typed array converts as a record of its elements: one key string each, tens of bytes of
    // host heap for each byte it holds, so its size is checked before any key is made.
    bytes: { inputSchema: { type: 'object' }, maxResultBytes: 1000, run: () => new Uint8Array(8_000_000) },
    fits: { inputSchema: { type: 'object' }, maxResultBytes: 1000, run: () => ({ at: new Date(0), text: 'x'.repeat(900), gone: undefined }) },
    // Depth costs nothing but bytes: a hundred thousand levels convert without recursion.
    deep: {
      inputSchema: { type: 'object' },
      run: () => {
        let value: unknown = { at: new Date(0), gone: undefined }
        for (let level = 0; level < 100_000; level++) value = [value]
        return value
      },
    },
  },
})

const strict: PtcBindingNamespace = {
  global: 'strict',
  functions: { nothing: async () => undefined as never, date: async () => new Date(0) as never },
}
const opted: PtcBindingNamespace = { ...strict, global: 'opted', convertResults: true }

describe.each([
  ['the thread tier', { isolation: 'thread' as const }],
  ['the default confined tier', {}],
])('tool results as people write them, on %s', (_tier, config) => {
  let env: Awaited<ReturnType<typeof startRuntime>>
  beforeAll(async () => {
    env = await startRuntime({ ...config, timeoutMs: 20_000, maxCalls: 100 })
  })
  afterAll(() => env.dispose())

  it('a tool group serves a program undefined, a Date as its ISO string and an object without its undefined field', async () => {
    const result = await env.run(
      `const [nothing, date, optional] = await Promise.all([values.nothing(), values.date(), values.optionalField()])
       return { nothing: nothing === undefined ? 'undefined' : nothing, date, optional, keys: Object.keys(optional) }`,
      { bindings: [values.namespace] },
    )
    expect(result.error).toBeUndefined()
    expect(result.value).toEqual({ nothing: 'undefined', date: '2026-01-02T03:04:05.006Z', optional: { a: 1 }, keys: ['a'] })
    expect(result.calls.map((call) => call.outcome)).toEqual(['ok', 'ok', 'ok'])
  })

  it('every other value reaches the program exactly as a JSON.stringify round trip gives it', async () => {
    const names = Object.keys(STRINGIFIABLE).filter((name) => name !== 'nothing')
    const result = await env.run(`const out = {}; for (const name of ${JSON.stringify(names)}) out[name] = await values[name](); return out`, { bindings: [values.namespace] })
    expect(result.error).toBeUndefined()
    const expected = Object.fromEntries(names.map((name) => [name, JSON.parse(JSON.stringify(STRINGIFIABLE[name]!()))]))
    expect(result.value).toEqual(expected)
    // Key order and an own "__proto__" key survive as JSON.parse gives them.
    expect(JSON.stringify(result.value)).toBe(JSON.stringify(expected))
  })

  it('a value JSON.stringify would lose or refuse still fails the call, naming where', async () => {
    const names = Object.keys(REFUSED)
    const result = await env.run(
      `const out = {}; for (const name of ${JSON.stringify(names)}) out[name] = await refused[name]().then(() => 'resolved', (e) => e.message); return out`,
      { bindings: [refused.namespace] },
    )
    expect(result.value).toEqual(Object.fromEntries(names.map((name) => [name, `refused.${name} resolved a value that is not lossless JSON (${REFUSED[name]![1]})`])))
  })

  it('a huge result stops being read once it is surely over its budget', async () => {
    reads = 0
    const result = await env.run(`return await huge.strings().catch((e) => e.message)`, { bindings: [huge.namespace] })
    expect(result.value).toBe("huge.strings resolved more than 1000 bytes of JSON, over its budget of 1000 (the tool's maxResultBytes); ask for less: a page, a filter, fewer fields")
    expect(reads).toBeLessThan(100)
    reads = 0
    const dropped = await env.run(`return await huge.dropped().catch((e) => e.message)`, { bindings: [huge.namespace] })
    expect(dropped.value).toMatch(/^huge\.dropped resolved more than 1000 bytes of JSON/)
    expect(reads).toBeLessThan(10_000)
  })

  it('a typed array surely over its budget is refused before its elements are enumerated', async () => {
    const before = process.memoryUsage().rss
    const result = await env.run(`return await huge.bytes().catch((e) => e.message)`, { bindings: [huge.namespace] })
    expect(result.value).toMatch(/^huge\.bytes resolved more than 1000 bytes of JSON, over its budget of 1000 \(the tool's maxResultBytes\)/)
    // Its 8 000 000 keys alone were about 400 MB of host heap (and seconds of the host's thread).
    expect((process.memoryUsage().rss - before) / 2 ** 20).toBeLessThan(150)
  })

  it('a converted result within its budget is counted by its JSON bytes in the trace', async () => {
    const result = await env.run(`return (await huge.fits()).text.length`, { bindings: [huge.namespace] })
    expect(result.value).toBe(900)
    expect(result.calls[0]!.resultBytes).toBe(JSON.stringify({ at: new Date(0), text: 'x'.repeat(900) }).length)
  })

  it('a deeply nested result converts without recursion', async () => {
    const result = await env.run(`let value = await huge.deep(), depth = 0; while (Array.isArray(value)) { value = value[0]; depth++ } return [depth, value]`, { bindings: [huge.namespace] })
    expect(result.value).toEqual([100_000, { at: '1970-01-01T00:00:00.000Z' }])
  })

  it('a raw namespace keeps the strict contract unless it sets convertResults', async () => {
    const result = await env.run(
      `const nothing = await opted.nothing()
       return [await strict.nothing().catch((e) => e.message), await strict.date().catch((e) => e.message), nothing === undefined ? 'undefined' : nothing, await opted.date()]`,
      { bindings: [strict, opted] },
    )
    expect(result.value).toEqual([
      'strict.nothing resolved undefined; tools must resolve JSON values (use null for nothing)',
      'strict.date resolved a value that is not lossless JSON (Date instance at $)',
      'undefined',
      '1970-01-01T00:00:00.000Z',
    ])
  })
})

describe('what the model reads about tool results', () => {
  it('a group declaration says results arrive as JSON.stringify writes them', () => {
    expect(values.declarations).toMatch(/^\/\*\* Results arrive as JSON\.stringify writes them \(a Date as its ISO string, undefined fields dropped\); a tool that returns nothing resolves undefined\. \*\/\ndeclare const values: \{/)
  })

  it('a namespace with a convertResults that is not a boolean is refused', async () => {
    const env = await startRuntime({ isolation: 'thread' })
    try {
      await expect(env.run('1', { bindings: [{ ...strict, convertResults: 'yes' as never }] })).rejects.toThrow('binding global "strict" has convertResults that is not a boolean')
    } finally {
      await env.dispose()
    }
  })
})

describe('converted results in a durable run', () => {
  it('a replay answers a recorded undefined and Date exactly as the first run got them, without running the tools again', async () => {
    const runs = { log: 0, when: 0 }
    const group = defineToolGroup({
      global: 'audit',
      tools: {
        log: { inputSchema: { type: 'object' }, run: () => void runs.log++ },
        when: { inputSchema: { type: 'object' }, run: () => (runs.when++, new Date(0)) },
        approve: { inputSchema: { type: 'object' }, needsApproval: true, run: () => 'approved' },
      },
    })
    const program = `const logged = await audit.log(); const at = await audit.when(); const verdict = await audit.approve()
      return { logged: logged === undefined ? 'undefined' : logged, at, verdict }`
    const key = 'a durable key of at least thirty-two bytes, for tests'
    const first = await startRuntime({ isolation: 'thread', durableKey: key })
    let token: string
    try {
      const paused = await first.run(program, { bindings: [group.namespace], pause: 'durable' })
      expect(paused.error).toBeUndefined()
      token = paused.paused!.token!
    } finally {
      await first.dispose()
    }
    const second = await startRuntime({ isolation: 'thread', durableKey: key })
    try {
      const result = await second.runtime.resume(token, { approve: true }, { bindings: [group.namespace] })
      expect(result.error).toBeUndefined()
      expect(result.value).toEqual({ logged: 'undefined', at: '1970-01-01T00:00:00.000Z', verdict: 'approved' })
      expect(runs).toEqual({ log: 1, when: 1 })
    } finally {
      await second.dispose()
    }
  })
})
