/**
 * Python programs behind the same seam: the same results, failures, bindings and positions as
 * JavaScript, from Pyodide restored in each environment's worker. These run on the thread tier
 * (the cheapest place to see the language work); test/python/confined.test.ts runs Python under
 * the default confinement.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type PtcBindingNamespace, type PtcJsonValue, createRunCodeTool, defineToolGroup } from 'ptc-runtime'
import { startRuntime, textOf } from '../helpers/runtime.js'

/** Answers only once three calls are waiting together: sequential calls would never return. */
let waiting: Array<() => void> = []
function meetInThrees(): Promise<string> {
  return new Promise((resolve) => {
    waiting.push(() => resolve('met'))
    if (waiting.length === 3) {
      for (const release of waiting) release()
      waiting = []
    }
  })
}

const WEATHER: PtcBindingNamespace = {
  global: 'weather',
  functions: {
    forecast: async ({ city }: { city: string }) => ({ city, highC: city.length * 3, met: await meetInThrees() }),
    echo: async (args: PtcJsonValue) => args,
    depth: async (args: unknown) => {
      let depth = 0
      for (let value = args; Array.isArray(value); value = value[0]) depth++
      return depth
    },
    nest: async ({ depth }: { depth: number }) => {
      let value: PtcJsonValue = null
      for (let level = 0; level < depth; level++) value = [value]
      return value
    },
    fail: async () => {
      throw new Error('no forecast for Atlantis')
    },
  },
  errorClass: { name: 'WeatherError', memberNameProperty: 'tool' },
}

/** Where a value nested 3 001 levels deep goes past the bound, and the bound's rule. */
const DEEP_PATH = `$${'[0]'.repeat(8)}…${'[0]'.repeat(8)}`
const PAST_BOUND = 'is nested past 3000 levels, the most a value crossing between Python and the host may nest'

// Booting or restoring an interpreter takes seconds on a loaded machine.
const SLOW = { timeout: 180_000 }

describe('Python programs (thread tier)', () => {
  let env: Awaited<ReturnType<typeof startRuntime>>
  const run = (program: string, options = {}) => env.run(program, { bindings: [WEATHER], timeoutMs: 60_000, ...options })
  beforeAll(async () => {
    env = await startRuntime({ language: 'python', isolation: 'thread', poolSize: 1 })
  }, 180_000)
  afterAll(() => env?.dispose())

  it('restores every worker from the host’s snapshot', SLOW, async () => {
    // CPython draws its hash seed as it boots: workers restored from one snapshot share it.
    const [first, second] = [await run('return hash("ptc-runtime")'), await run('return hash("ptc-runtime")')]
    expect(first.error).toBeUndefined()
    expect(first.value).toBe(second.value)
  })

  it('calls three tools concurrently with asyncio.gather, prints, and returns a value', SLOW, async () => {
    const result = await run(`import asyncio
print("asking")
days = await asyncio.gather(weather.forecast(city="Oslo"), weather.forecast({"city": "Rome"}), weather.forecast(city="Lima"))
return {"hottest": max(day["highC"] for day in days), "cities": [day["city"] for day in days]}`)
    expect(result.error).toBeUndefined()
    expect(textOf(result)).toBe('asking\n')
    expect(result.value).toEqual({ hottest: 12, cities: ['Oslo', 'Rome', 'Lima'] })
    expect(result.calls.map((call) => call.outcome)).toEqual(['ok', 'ok', 'ok'])
  })

  it('reports an exception with the program’s own lines and columns, innermost first', SLOW, async () => {
    const result = await run('x = 1\ndef divide(y):\n    return y / 0\ndivide(x)')
    expect(result.error).toEqual({ kind: 'exception', message: 'ZeroDivisionError: division by zero\n    at divide (program:3:12)\n    at program:4:1' })
  })

  it('reports a syntax error with its line, column and a caret', SLOW, async () => {
    const result = await run('a = 1\nb = = 2')
    expect(result.error).toEqual({ kind: 'exception', message: 'SyntaxError: invalid syntax (line 2, column 5)\nb = = 2\n    ^' })
  })

  it('raises a tool error as the group’s error class, naming the tool', SLOW, async () => {
    const result = await run(`try:
    await weather.fail()
except WeatherError as error:
    print(type(error).__name__, error.tool, error)
await weather.fail()`)
    expect(textOf(result)).toBe('WeatherError fail no forecast for Atlantis\n')
    expect(result.error).toEqual({ kind: 'exception', message: 'WeatherError: no forecast for Atlantis\n    at program:5:1' })
  })

  it('refuses arguments and completions that are not lossless JSON, naming the path at any depth', SLOW, async () => {
    const result = await run(`refusals = []
cyclic = []
cyclic.append(cyclic)
for bad in [{"a": {"b": [1, 2**60]}}, {"n": float("nan")}, {"keys": {1: "x"}}, {"c": cyclic}, {"s": {1, 2}}]:
    try:
        await weather.echo(bad)
    except TypeError as error:
        refusals.append(str(error))
return refusals`)
    expect(result.value).toEqual([
      'weather.echo: arguments must be lossless JSON ($.a.b[1] is an integer beyond 2**53, which a JSON number cannot carry exactly (send it as a string))',
      'weather.echo: arguments must be lossless JSON ($.n is nan, which is not JSON)',
      "weather.echo: arguments must be lossless JSON ($.keys has the key 1, and JSON keys are strings)",
      'weather.echo: arguments must be lossless JSON ($.c[0] contains itself (a cycle))',
      'weather.echo: arguments must be lossless JSON ($.s is a set, which is not JSON (use dict, list, str, int, float, bool or None))',
    ])
    const completion = await run('return {"big": 2**53 + 1}')
    expect(completion.error?.message).toMatch(/^ValueError: the completion value is not lossless JSON: \$\.big is an integer beyond 2\*\*53/)
  })

  it('sends arguments nested far deeper than Python’s recursion limit', SLOW, async () => {
    const result = await run('value = 0\nfor _ in range(2999):\n    value = [value]\nreturn await weather.depth(value)')
    expect(result.value).toBe(2999)
  })

  it('raises a tool result nested past 3 000 levels at its await, naming the bound and the path', SLOW, async () => {
    const result = await run(`value = await weather.nest(depth=3000)
depth = 0
while value is not None:
    value, depth = value[0], depth + 1
try:
    await weather.nest(depth=30000)
except ValueError as error:
    return [depth, str(error)]`)
    expect(result.error).toBeUndefined()
    expect(result.value).toEqual([3000, `weather.nest: its result nests too deep (${DEEP_PATH} ${PAST_BOUND})`])
  })

  it('refuses arguments and a completion nested past 3 000 levels before anything is sent', SLOW, async () => {
    const nested = (depth: number) => `value = None\nfor _ in range(${depth}):\n    value = [value]\n`
    const args = await run(`${nested(3001)}try:\n    await weather.depth(value)\nexcept ValueError as error:\n    return [str(error), await weather.depth(value[0])]`)
    expect(args.value).toEqual([`weather.depth: arguments nest too deep (${DEEP_PATH} ${PAST_BOUND})`, 3000])
    expect(args.calls).toHaveLength(1)
    const completion = await run(`${nested(3001)}return value`)
    expect(completion.error).toEqual({ kind: 'exception', message: `ValueError: the completion value nests too deep (${DEEP_PATH} ${PAST_BOUND})` })
    let depth = 0
    for (let value = (await run(`${nested(3000)}return value`)).value; value !== null; value = (value as PtcJsonValue[])[0]!) depth++
    expect(depth).toBe(3000)
  })

  it('keeps large integers, unicode and floats exact across the boundary', SLOW, async () => {
    const sent = { big: 2 ** 53, negative: -(2 ** 53), text: 'Zürich 東京 🌧', ratio: 0.1, tiny: 5e-324 }
    const result = await run(`return await weather.echo(${JSON.stringify(sent)})`)
    expect(result.value).toEqual(sent)
  })

  it('refuses a tool call with both positional and keyword arguments', SLOW, async () => {
    const result = await run('await weather.echo({"city": "Oslo"}, city="Rome")')
    expect(result.error?.message).toMatch(/^TypeError: weather\.echo takes keyword arguments or one dict/)
  })

  it('serves the ready run_code tool: described as Python, schema-checked tools, errors as the group’s class', SLOW, async () => {
    const group = defineToolGroup({
      global: 'forecasts',
      errorClass: { name: 'ForecastError', memberNameProperty: 'tool' },
      tools: {
        tomorrow: {
          inputSchema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
          run: ({ city }) => ({ city, highC: 14 }),
        },
      },
    })
    expect(() => createRunCodeTool({ runtime: env.runtime, groups: [group], typecheck: true })).toThrow(/typecheck checks TypeScript/)
    const tool = createRunCodeTool({ runtime: env.runtime, groups: [group], timeoutMs: 60_000 })
    expect(tool.description).toMatch(/^Run a Python program/)
    expect(tool.description).toContain('    async def tomorrow(*, city: str) -> Any:')
    const text = await tool.execute({ program: 'day = await forecasts.tomorrow(city="Oslo")\ntry:\n    await forecasts.tomorrow(town="Oslo")\nexcept ForecastError as error:\n    print("refused:", error.tool)\nreturn day' })
    expect(text).toContain('refused: tomorrow')
    expect(text).toMatch(/"city": "Oslo",\s*"highC": 14/)
  })

  it('stops a runaway loop at its deadline', SLOW, async () => {
    const result = await run('while True:\n    pass', { timeoutMs: 1500 })
    expect(result.error?.kind).toBe('timeout')
    expect((await run('return 1 + 1')).value).toBe(2)
  })
})

describe('Python per request and in the REPL formats', () => {
  it('runs a request in Python on a JavaScript runtime', SLOW, async () => {
    const env = await startRuntime({ isolation: 'thread', poolSize: 0 })
    try {
      const python = await env.run('import sys\nreturn sys.version_info[0]', { language: 'python', timeoutMs: 120_000 })
      expect(python.value).toBe(3)
      expect((await env.run('return [1, 2].length')).value).toBe(2)
    } finally {
      await env.dispose()
    }
  })

  it('fails a run whose Python failed fatally, and starts the owner’s next run in a fresh environment', SLOW, async () => {
    const env = await startRuntime({ language: 'python', isolation: 'thread', programFormat: 'repl', retainState: true, poolSize: 1 })
    try {
      const owner = {}
      await env.run('kept = 1', { stateOwner: owner, timeoutMs: 120_000 })
      // Freeing a list nested this deep recurses past the worker's stack: Pyodide cannot go on.
      const fatal = await env.run('def drop():\n    value = None\n    for _ in range(100000):\n        value = [value]\ndrop()', { stateOwner: owner, timeoutMs: 120_000 })
      expect(fatal.error?.kind).toBe('exception')
      expect(fatal.error?.message).toMatch(/^Python failed fatally in this environment \(RangeError: Maximum call stack size exceeded\)/)
      const next = await env.run('2 + 2', { stateOwner: owner, timeoutMs: 20_000 })
      expect(next.value).toBe(4)
      expect(textOf(next)).toBe('[earlier state was lost because its environment became unusable; this run starts in a fresh environment]\n')
    } finally {
      await env.dispose()
    }
  })

  it('keeps an owner’s Python state across repl runs, and gives the last expression’s value', SLOW, async () => {
    const env = await startRuntime({ language: 'python', isolation: 'thread', programFormat: 'repl', retainState: true, poolSize: 1 })
    try {
      const owner = {}
      const first = await env.run('import math\ntotal = math.floor(2.5)\ntotal * 10', { stateOwner: owner, timeoutMs: 120_000 })
      expect(first.value).toBe(20)
      const second = await env.run('total += 1\ntotal', { stateOwner: owner, timeoutMs: 120_000 })
      expect(second.value).toBe(3)
      const stranger = await env.run('total', { stateOwner: {}, timeoutMs: 120_000 })
      expect(stranger.error?.message).toMatch(/^NameError: name 'total' is not defined/)
    } finally {
      await env.dispose()
    }
  })
})
