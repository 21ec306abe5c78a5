import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { PtcBindingErrorReport, PtcBindingNamespace } from 'ptc-runtime'
import { startRuntime } from '../helpers/runtime.js'

describe('bindings', () => {
  let env: Awaited<ReturnType<typeof startRuntime>>
  const calls: unknown[] = []
  const tools: PtcBindingNamespace = {
    global: 'tools',
    functions: {
      echo: async (args: unknown) => {
        calls.push(args)
        return args as never
      },
      fail: async () => {
        throw new Error('the catalogue is offline')
      },
      lossy: async () => Number.NaN as never,
      undef: async () => undefined as never,
      ['__proto__']: async () => 'proto member',
      constructor: async () => 'constructor member',
    } as never,
    errorClass: { name: 'ToolCallError', memberNameProperty: 'toolName' },
  }
  const plain: PtcBindingNamespace = {
    global: 'plain',
    functions: { fail: async () => Promise.reject('a string reason') },
  }
  beforeAll(async () => {
    env = await startRuntime({ timeoutMs: 10_000, maxPendingCalls: 16 })
  })
  afterAll(() => env.dispose())

  const run = (program: string) => env.run(program, { bindings: [tools, plain] })

  it('calls a host function with JSON arguments and returns its resolution', async () => {
    calls.length = 0
    expect((await run('return await tools.echo({ q: "shoes", n: [1, 2] })')).value).toEqual({ q: 'shoes', n: [1, 2] })
    expect(calls).toEqual([{ q: 'shoes', n: [1, 2] }])
  })

  it('exposes null-prototype namespaces whose odd member names are plain callables', async () => {
    const result = await run(`
      return [Object.getPrototypeOf(tools) === null, await tools.__proto__(), await tools.constructor(), Object.keys(tools).length]`)
    expect(result.value).toEqual([true, 'proto member', 'constructor member', 6])
  })

  it('rejects lossy arguments in the program without calling the host', async () => {
    calls.length = 0
    const result = await run('try { await tools.echo({ n: NaN }) } catch (e) { return e.message }')
    expect(result.value).toMatch(/tools\.echo: arguments must be lossless JSON \(NaN at \$\.n\)/)
    expect(calls).toEqual([])
  })

  it('rejects a lossy or undefined resolution with a clear message', async () => {
    expect((await run('try { await tools.lossy() } catch (e) { return e.message }')).value).toMatch(/tools\.lossy resolved a value that is not lossless JSON/)
    expect((await run('try { await tools.undef() } catch (e) { return e.message }')).value).toMatch(/use null/)
  })

  it('tells the developer through onBindingError when a tool resolves a value the program cannot receive', async () => {
    const reports: PtcBindingErrorReport[] = []
    const result = await env.run('try { await tools.lossy() } catch (e) { return e.message }', {
      bindings: [tools],
      onBindingError: (report) => reports.push(report),
    })
    expect(reports).toEqual([{ binding: 'tools.lossy', kind: 'invalid-value', message: result.value, cause: Number.NaN }])
  })

  it('tells the developer through onBindingError what a tool threw', async () => {
    const reports: PtcBindingErrorReport[] = []
    await env.run('await tools.fail().catch(() => null)', { bindings: [tools], onBindingError: (report) => reports.push(report) })
    expect(reports).toHaveLength(1)
    expect(reports[0]).toMatchObject({ binding: 'tools.fail', kind: 'threw', message: 'the catalogue is offline' })
    expect(reports[0]!.cause).toBeInstanceOf(Error)
  })

  it('emits a PTC_INVALID_TOOL_VALUE process warning for an invalid value when no hook is given', async () => {
    const warnings: Array<Error & { code?: string }> = []
    const listen = (warning: Error & { code?: string }) => warnings.push(warning)
    process.on('warning', listen)
    try {
      await run('await tools.undef().catch(() => null)')
      await new Promise((resolve) => setImmediate(resolve))
    } finally {
      process.off('warning', listen)
    }
    expect(warnings.map(({ code, message }) => ({ code, message }))).toEqual([
      { code: 'PTC_INVALID_TOOL_VALUE', message: expect.stringMatching(/^tools\.undef resolved undefined/) },
    ])
  })

  it('keeps the run going when onBindingError throws', async () => {
    const result = await env.run('return await tools.fail().catch((e) => e.message)', {
      bindings: [tools],
      onBindingError: () => {
        throw new Error('a broken hook')
      },
    })
    expect(result.value).toBe('the catalogue is offline')
  })

  it('refuses a second argument in the program without calling the host', async () => {
    calls.length = 0
    const result = await run('try { await tools.echo({ q: 1 }, { page: 2 }) } catch (e) { return [e.constructor === TypeError, e.message] }')
    expect(result.value).toEqual([true, 'tools.echo takes one argument (an object of named arguments), got 2'])
    expect(calls).toEqual([])
  })

  it('refuses a tool passed as a callback to map, which adds index and array', async () => {
    const result = await run('return await Promise.all([{ a: 1 }].map(tools.echo)).catch((e) => e.message)')
    expect(result.value).toBe('tools.echo takes one argument (an object of named arguments), got 3')
  })

  it('turns a host rejection into an instance of the declared error class', async () => {
    const result = await run(`
      try { await tools.fail() } catch (e) {
        return [e instanceof ToolCallError, e instanceof Error, e.name, e.toolName, e.message]
      }`)
    expect(result.value).toEqual([true, true, 'ToolCallError', 'fail', 'the catalogue is offline'])
  })

  it('turns a host rejection into a plain Error without an error class', async () => {
    const result = await run('try { await plain.fail() } catch (e) { return [e.constructor === Error, e.message] }')
    expect(result.value).toEqual([true, 'a string reason'])
  })

  it('an uncaught binding failure points at the program line that called it', async () => {
    const result = await run('const x = 1\nawait tools.fail()')
    expect(result.error).toEqual({ kind: 'exception', message: 'ToolCallError: the catalogue is offline\n    at program:2:1' })
  })

  it('runs concurrent calls with Promise.all', async () => {
    const result = await run('return (await Promise.all(Array.from({ length: 10 }, (_, i) => tools.echo(i)))).reduce((a, b) => a + b)')
    expect(result.value).toBe(45)
  })

  it('gives each of many concurrent calls its own result, however their resolutions interleave', async () => {
    const mixed: PtcBindingNamespace = {
      global: 'mixed',
      functions: {
        now: async (value) => value as never,
        later: (value) => new Promise((resolve) => setTimeout(() => resolve(value as never), Number(value) % 3)),
      },
    }
    const result = await env.run(
      'return await Promise.all(Array.from({ length: 12 }, (_, i) => (i % 2 ? mixed.later(i) : mixed.now(i))))',
      { bindings: [mixed] },
    )
    expect(result.value).toEqual(Array.from({ length: 12 }, (_, i) => i))
  })

  it('delivers a call the program made without awaiting it right before it returned', async () => {
    const seen: unknown[] = []
    const record: PtcBindingNamespace = { global: 'record', functions: { add: async (value) => (seen.push(value), null) } }
    const result = await env.run('record.add(1); record.add(2); return "done"', { bindings: [record] })
    expect(result.value).toBe('done')
    expect(seen).toEqual([1, 2])
  })

  it('fails with protocol when more calls are pending than maxPendingCalls', async () => {
    const slow: PtcBindingNamespace = { global: 'slow', functions: { wait: () => new Promise((resolve) => setTimeout(() => resolve(null), 100)) } }
    const result = await env.run('await Promise.all(Array.from({ length: 40 }, () => slow.wait()))', { bindings: [slow] })
    expect(result.error?.kind).toBe('protocol')
    expect(result.error?.message).toMatch(/maxPendingCalls/)
    // A batch of exactly maxPendingCalls calls, made in one tick, is served.
    const full = await env.run('return (await Promise.all(Array.from({ length: 16 }, () => slow.wait()))).length', { bindings: [slow] })
    expect(full.value).toBe(16)
  })

  it('serves a Promise.all over 100 000 calls, sent as one batch, when maxPendingCalls and maxCalls allow them', async () => {
    const wide = await startRuntime({ timeoutMs: 60_000, maxPendingCalls: 100_000, maxCalls: 100_000 })
    try {
      const count: PtcBindingNamespace = { global: 'count', functions: { back: async (n) => n } }
      const result = await wide.run('const all = await Promise.all(Array.from({ length: 100_000 }, (_, i) => count.back(i)))\nreturn [all.length, all[99_999]]', { bindings: [count] })
      expect(result.value).toEqual([100_000, 99_999])
    } finally {
      await wide.dispose()
    }
  }, 60_000)

  it('aborts call.signal when the run settles and ignores a late resolution', async () => {
    let signal: AbortSignal | undefined
    let release: (value: null) => void = () => {}
    const slow: PtcBindingNamespace = {
      global: 'slow',
      functions: {
        wait: (_args, call) => {
          signal = call.signal
          return new Promise((resolve) => (release = resolve))
        },
      },
    }
    const result = await env.run('slow.wait(); return "left early"', { bindings: [slow] })
    expect(result.value).toBe('left early')
    expect(signal?.aborted).toBe(true)
    release(null)
    expect((await env.run('return 2')).value).toBe(2)
  })
})

describe.each([
  ['the thread tier', { isolation: 'thread' as const }],
  ['the default confined tier', {}],
])('what a program is told when it slips on a namespace, on %s', (_tier, config) => {
  let env: Awaited<ReturnType<typeof startRuntime>>
  const weather: PtcBindingNamespace = {
    global: 'weather',
    functions: { forecast: async () => 'sunny', now: async () => 'rain', history: async () => [] },
  }
  const tools: PtcBindingNamespace = { global: 'tools', functions: { search: async () => [] } }
  beforeAll(async () => {
    env = await startRuntime({ ...config, timeoutMs: 10_000 })
  })
  afterAll(() => env.dispose())

  const errorOf = async (program: string) => (await env.run(program, { bindings: [weather, tools] })).error

  it('adding a helper to a namespace says it is read-only and what to do instead, at the program line', async () => {
    expect(await errorOf('const x = 1\ntools.step = async () => 1')).toEqual({
      kind: 'exception',
      message: 'TypeError: Cannot assign tools.step: the tool namespace tools is read-only; keep helpers in your own functions or variables (const step = async (...) => ...)\n    at program:2:12',
    })
    expect((await errorOf('Object.defineProperty(weather, "x", { value: 1 })'))?.message).toMatch(/^TypeError: Cannot define weather\.x: the tool namespace weather is read-only/)
    expect((await errorOf('delete weather.now'))?.message).toMatch(/^TypeError: Cannot delete weather\.now: the tool namespace weather is read-only/)
  })

  it('an Object.prototype method on a namespace says to use Object.hasOwn', async () => {
    expect(await errorOf('return weather.hasOwnProperty("now")')).toEqual({
      kind: 'exception',
      message: 'TypeError: weather.hasOwnProperty does not exist: tool namespaces have no prototype; test for a tool with Object.hasOwn(weather, name) or name in weather\n    at program:1:16',
    })
  })

  it('a namespace still reads as a frozen null-prototype object of its tools', async () => {
    const result = await env.run(
      `console.log(weather)
       return [Object.hasOwn(weather, 'now'), 'forecast' in weather, Object.keys(weather), Object.isFrozen(weather), Object.getPrototypeOf(weather) === null, weather.missing === undefined, typeof weather.now, await weather.now()]`,
      { bindings: [weather] },
    )
    expect(result.value).toEqual([true, true, ['forecast', 'now', 'history'], true, true, true, 'function', 'rain'])
    expect(result.output).toEqual([{ type: 'text', text: expect.stringContaining('forecast: [AsyncFunction: forecast]') }])
  })

  it('an undeclared name lists the tool globals that exist, closest first, at the program line', async () => {
    expect(await errorOf('const x = 1\nawait wether.now()')).toEqual({
      kind: 'exception',
      message: 'ReferenceError: wether is not defined; the tool globals are weather, tools\n    at program:2:1',
    })
  })

  it('a misspelt tool names the closest tool of its namespace', async () => {
    expect(await errorOf('await weather.forcast({ city: "Oslo" })')).toEqual({
      kind: 'exception',
      message: 'TypeError: weather.forcast is not a function; did you mean weather.forecast?\n    at program:1:15',
    })
  })

  it('a tool called without its namespace, or on the wrong one, names the namespace that has it', async () => {
    expect((await errorOf('await forecast({ city: "Oslo" })'))?.message).toBe('ReferenceError: forecast is not defined; did you mean weather.forecast? The tool globals are tools, weather\n    at program:1:1')
    expect((await errorOf('await tools.forecast()'))?.message).toBe('TypeError: tools.forecast is not a function; did you mean weather.forecast?\n    at program:1:13')
  })

  it('a tool far from every name lists the namespace tools instead', async () => {
    expect((await errorOf('await weather.translate()'))?.message).toBe('TypeError: weather.translate is not a function; weather has weather.forecast, weather.now, weather.history\n    at program:1:15')
  })

  it('the hint is in error.stack too, and error.message stays as the engine wrote it', async () => {
    const result = await env.run('try { await weather.forcast() } catch (e) { return [e.message, e.stack.split("\\n")[0]] }', { bindings: [weather] })
    expect(result.value).toEqual(['weather.forcast is not a function', 'TypeError: weather.forcast is not a function; did you mean weather.forecast?'])
  })
})
