import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { defineToolGroup } from 'ptc-runtime'
import { startRuntime } from '../helpers/runtime.js'
import { longestStall } from '../helpers/stall.js'

let ran: unknown[] = []

const issues = defineToolGroup({
  global: 'issues',
  errorClass: { name: 'IssuesError', memberNameProperty: 'tool' },
  tools: {
    search: {
      inputSchema: {
        type: 'object',
        properties: {
          query: { type: 'string' },
          limit: { type: 'integer', minimum: 1, maximum: 100 },
          labels: { type: 'array', items: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] } },
        },
        required: ['query'],
        additionalProperties: false,
      },
      run: (args) => {
        ran.push(args)
        return [{ id: 1 }]
      },
    },
    slow: {
      inputSchema: { type: 'object' },
      timeoutMs: 200,
      run: (_args, { signal }) =>
        new Promise((resolve) => {
          signal.addEventListener('abort', () => resolve('stopped'), { once: true })
        }),
    },
    dump: {
      inputSchema: { type: 'object', properties: { size: { type: 'integer' } } },
      maxResultBytes: 1000,
      run: ({ size }) => 'x'.repeat(size),
    },
    legacy: {
      // A draft-07 tuple: the dialect named in $schema decides how `items` reads.
      inputSchema: { $schema: 'http://json-schema.org/draft-07/schema#', type: 'object', properties: { pair: { type: 'array', items: [{ type: 'string' }, { type: 'number' }] } } },
      run: ({ pair }) => pair,
    },
  },
})

describe('validated calls with budgets', () => {
  let env: Awaited<ReturnType<typeof startRuntime>>
  beforeAll(async () => {
    env = await startRuntime({ isolation: 'thread', timeoutMs: 10_000, maxCalls: 5 })
  })
  afterAll(() => env.dispose())

  const failureOf = async (call: string) => {
    ran = []
    const result = await env.run(`return await ${call}.then(() => 'resolved', (error) => ({ typed: error instanceof IssuesError, tool: error.tool, message: error.message }))`, { bindings: [issues.namespace] })
    return { value: result.value as { typed: boolean; tool: string; message: string }, calls: result.calls }
  }

  it('a wrong argument rejects in the program with the group error class, the tool and the path, and the tool never runs', async () => {
    const { value, calls } = await failureOf(`issues.search({ query: 'bug', labels: [{ name: 'p1' }, { name: 7 }] })`)
    expect(value).toEqual({ typed: true, tool: 'search', message: 'issues.search: invalid arguments: $.labels[1].name must be string' })
    expect(ran).toEqual([])
    expect(calls).toMatchObject([{ tool: 'issues.search', outcome: 'refused', error: value.message }])
  })

  it('a missing required property and an unknown one are named by their path', async () => {
    expect((await failureOf('issues.search({ limit: 3 })')).value.message).toBe('issues.search: invalid arguments: $.query is required')
    expect((await failureOf(`issues.search({ query: 'x', lmit: 3 })`)).value.message).toBe('issues.search: invalid arguments: $.lmit is not allowed (no such property)')
    expect((await failureOf(`issues.search({ query: 'x', limit: 500 })`)).value.message).toBe('issues.search: invalid arguments: $.limit must be <= 100')
  })

  it('a call without an argument is checked as an empty object', async () => {
    expect((await failureOf('issues.search()')).value.message).toBe('issues.search: invalid arguments: $.query is required')
  })

  it('an argument that fits reaches the tool unchanged', async () => {
    ran = []
    const result = await env.run(`return await issues.search({ query: 'bug', limit: 2 })`, { bindings: [issues.namespace] })
    expect(result.value).toEqual([{ id: 1 }])
    expect(ran).toEqual([{ query: 'bug', limit: 2 }])
  })

  it('a draft-07 schema is read as draft 7', async () => {
    const result = await env.run(`return [await issues.legacy({ pair: ['a', 1] }), await issues.legacy({ pair: [1, 'a'] }).catch((error) => error.message)]`, { bindings: [issues.namespace] })
    expect(result.value).toEqual([['a', 1], 'issues.legacy: invalid arguments: $.pair[0] must be string'])
  })

  it('a call past its timeoutMs rejects naming the tool, and its signal aborts', async () => {
    const { value, calls } = await failureOf('issues.slow({})')
    expect(value.message).toBe('issues.slow did not finish within its time budget of 200 ms (timeoutMs)')
    expect(calls).toMatchObject([{ tool: 'issues.slow', outcome: 'timeout' }])
    expect(calls[0]!.durationMs).toBeGreaterThanOrEqual(190)
  })

  it('a binding that answers synchronously within its timeoutMs is served', async () => {
    const sync = { global: 'sync', functions: { now: (() => 42) as never }, limits: { now: { timeoutMs: 1000 } } }
    const result = await env.run('return await sync.now()', { bindings: [sync] })
    expect(result.value).toBe(42)
    expect(result.calls).toMatchObject([{ tool: 'sync.now', outcome: 'ok', resultBytes: 2 }])
  })

  it('a result over maxResultBytes rejects in the program, and the trace records the error', async () => {
    const { value, calls } = await failureOf('issues.dump({ size: 2000 })')
    // A group's result is converted, and the conversion stops reading once the value is surely over.
    expect(value.message).toMatch(/^issues\.dump resolved more than 1000 bytes of JSON, over its budget of 1000 \(the tool's maxResultBytes\)/)
    expect(calls).toMatchObject([{ tool: 'issues.dump', outcome: 'error', error: value.message }])
    expect(calls[0]!.resultBytes).toBeUndefined()
  })

  it("a result over the runtime's maxCallResultBytes, below the tool's own budget, names the runtime's setting", async () => {
    const tight = await startRuntime({ isolation: 'thread', maxCallResultBytes: 500 })
    try {
      const result = await tight.run('return await issues.dump({ size: 800 }).catch((error) => error.message)', { bindings: [issues.namespace] })
      expect(result.value).toMatch(/^issues\.dump resolved more than 500 bytes of JSON, over its budget of 500 \(maxCallResultBytes in the runtime's configuration\)/)
    } finally {
      await tight.dispose()
    }
  })

  it('calls past maxCalls are refused in the program, the earlier ones are served', async () => {
    const result = await env.run(
      `const settled = await Promise.allSettled(Array.from({ length: 7 }, (_, i) => issues.search({ query: 'q' + i })))
       return settled.map((entry) => entry.status === 'fulfilled' ? 'ok' : entry.reason.message)`,
      { bindings: [issues.namespace] },
    )
    const refusal = "issues.search: this run has made its 5 calls (maxCalls); do more per call or finish the work in another run"
    expect(result.value).toEqual(['ok', 'ok', 'ok', 'ok', 'ok', refusal, refusal])
    expect(result.calls.map((call) => call.outcome)).toEqual(['ok', 'ok', 'ok', 'ok', 'ok', 'refused', 'refused'])
  })

  it('a program that keeps calling after its calls were refused past maxCalls is ended, rather than the host reading and refusing them for its whole time budget', async () => {
    const looping = `for (;;) { try { await issues.search({ query: 'again' }) } catch {} }`
    const result = await env.run(looping, { bindings: [issues.namespace], timeoutMs: 20_000 })
    expect(result.error).toEqual({
      kind: 'exception',
      message: 'the program made 100 more calls after its 5 calls (maxCalls) were used up and each was refused, so the run was ended; do more per call or finish the work in another run',
    })
    expect(result.calls.map((call) => call.outcome)).toEqual([...Array(5).fill('ok'), ...Array(100).fill('refused')])
    // The host serves the next run.
    expect((await env.run(`return (await issues.search({ query: 'a' })).length`, { bindings: [issues.namespace] })).value).toBe(1)
  })

  it('a request may set its own maxCalls', async () => {
    const result = await env.run(`return await issues.search({ query: 'a' }).then(() => issues.search({ query: 'b' })).catch((error) => error.message)`, {
      bindings: [issues.namespace],
      maxCalls: 1,
    })
    expect(result.value).toMatch(/made its 1 calls \(maxCalls\)/)
  })

  it('a maxCalls that is not a positive integer is refused by resolve', () => {
    expect(() => env.runtime.resolve({ program: '', bindings: [], maxCalls: 0 })).toThrow('maxCalls must be a positive integer, got 0')
  })

  it('limits of a member that does not exist, or that are not positive integers, are refused', async () => {
    const fn = async () => null
    await expect(env.run('', { bindings: [{ global: 'a', functions: { f: fn }, limits: { g: { timeoutMs: 5 } } }] })).rejects.toThrow('has limits for "g", which is not one of its functions')
    expect(() => defineToolGroup({ global: 'a', tools: { f: { inputSchema: {}, timeoutMs: -1, run: fn } } })).toThrow('limits of "a.f": timeoutMs must be a positive integer')
    expect(() => defineToolGroup({ global: 'a', tools: { f: { inputSchema: {}, maxArgumentBytes: 1.5, run: fn } } })).toThrow('limits of "a.f": maxArgumentBytes must be a positive integer')
  })

  it("an argument over the tool's maxArgumentBytes is refused before its schema or the tool runs", async () => {
    let runs = 0
    const small = defineToolGroup({ global: 'small', tools: { take: { inputSchema: { type: 'object', properties: { text: { type: 'string', pattern: '^x*$' } } }, maxArgumentBytes: 100, run: () => ++runs } } })
    const result = await env.run("return [await small.take({ text: 'x'.repeat(80) }), await small.take({ text: 'x'.repeat(100) }).catch((error) => error.message)]", { bindings: [small.namespace] })
    expect(result.value).toEqual([1, "small.take: its argument is 111 JSON bytes, over the tool's maxArgumentBytes of 100; pass less per call"])
    expect(result.calls?.map((call) => [call.outcome, call.argumentBytes])).toEqual([['ok', 91], ['refused', 111]])
    expect(runs).toBe(1)
  })
})

const patterned = defineToolGroup({
  global: 'forms',
  tools: {
    words: {
      // A pattern real schemas contain, and exponential on a backtracking engine.
      inputSchema: { type: 'object', properties: { text: { type: 'string', pattern: '^(\\w+\\s?)*$' } } },
      run: ({ text }) => text,
    },
    keyed: {
      inputSchema: { type: 'object', patternProperties: { '^(\\w+\\s?)*$': { type: 'number' } }, additionalProperties: false },
      run: () => 'ok',
    },
    spaced: {
      inputSchema: { type: 'object', properties: { gap: { type: 'string', pattern: '^a\\sb$' }, line: { type: 'string', pattern: '^a.b$' }, emoji: { type: 'string', pattern: '^\\uD83D\\uDE00.$' } } },
      run: () => 'ok',
    },
    annotated: {
      inputSchema: { type: 'object', properties: { mail: { type: 'string', format: 'email' } } },
      run: ({ mail }) => mail,
    },
    sized: {
      inputSchema: { type: 'object', properties: { text: { type: 'string', pattern: '^a*$' } } },
      run: ({ text }) => text.length,
    },
    named: {
      inputSchema: { type: 'object', propertyNames: { pattern: '^a*$' } },
      run: () => 'ok',
    },
    codes: {
      inputSchema: { type: 'object', properties: { codes: { type: 'array', items: { type: 'string', pattern: '^x+$' } } } },
      run: ({ codes }) => codes.length,
    },
    longNames: {
      // ECMAScript takes the long name of a Unicode property; RE2 only the short one (`\p{L}`).
      inputSchema: { type: 'object', properties: { name: { type: 'string', pattern: '^\\p{Letter}+$' } } },
      run: () => 'ran',
    },
  },
})

describe('schema patterns on a linear-time engine', () => {
  let env: Awaited<ReturnType<typeof startRuntime>>
  beforeAll(async () => {
    env = await startRuntime({ isolation: 'thread', timeoutMs: 10_000 })
  })
  afterAll(() => env.dispose())

  const attempt = async (call: string) => (await env.run(`return await ${call}.catch((error) => error.message)`, { bindings: [patterned.namespace] })).value

  it('a pattern that backtracks exponentially answers at once, refusing 33 characters that do not match and taking 100 000 that do', async () => {
    expect(await attempt(`forms.words({ text: 'a'.repeat(33) + '!' })`)).toBe('forms.words: invalid arguments: $.text must match pattern "^(\\w+\\s?)*$"')
    expect(await attempt(`forms.words({ text: 'ab '.repeat(33_333) })`)).toBe('ab '.repeat(33_333))
  })

  it('patternProperties go through the same engine', async () => {
    expect(await attempt(`forms.keyed({ ['a'.repeat(33) + '!']: 1 })`)).toMatch(/^forms\.keyed: invalid arguments: \$\["a{33}!"\] is not allowed \(no such property\)$/)
    expect(await attempt(`forms.keyed({ ab: 1 })`)).toBe('ok')
  })

  it('keeps what ECMAScript means by \\s, . and an escaped surrogate pair', async () => {
    expect(await attempt(`forms.spaced({ gap: 'a\\u00a0b', line: 'a-b', emoji: '😀x' })`)).toBe('ok')
    expect(await attempt(`forms.spaced({ line: 'a\\rb' })`)).toBe('forms.spaced: invalid arguments: $.line must match pattern "^a.b$"')
    expect(await attempt(`forms.spaced({ gap: 'a\\u00a0\\u00a0b' })`)).toBe('forms.spaced: invalid arguments: $.gap must match pattern "^a\\sb$"')
  })

  it('refuses a string over 262 144 characters before its pattern runs, naming its path, the pattern and the bound', async () => {
    expect(await attempt(`forms.sized({ text: 'a'.repeat(262_144) })`)).toBe(262_144)
    expect(await attempt(`forms.sized({ text: 'a'.repeat(262_145) })`)).toBe('forms.sized: invalid arguments: $.text has 262145 characters, over the 262144 a pattern is matched against (pattern "^a*$"); pass a shorter string')
    expect(await attempt(`forms.codes({ codes: ['x', 'x'.repeat(262_145)] })`)).toBe('forms.codes: invalid arguments: $.codes[1] has 262145 characters, over the 262144 a pattern is matched against (pattern "^x+$"); pass a shorter string')
  })

  it('bounds property names matched by patternProperties and propertyNames alike, never printing the name', async () => {
    expect(await attempt(`forms.keyed({ ab: 1, ['a'.repeat(262_145)]: 1 })`)).toBe('forms.keyed: invalid arguments: a property name of $ has 262145 characters, over the 262144 a pattern is matched against (pattern "^(\\\\w+\\\\s?)*$"); pass a shorter name')
    expect(await attempt(`forms.named({ aa: 1, ['a'.repeat(262_145)]: 1 })`)).toBe('forms.named: invalid arguments: a property name of $ has 262145 characters, over the 262144 a pattern is matched against (pattern "^a*$"); pass a shorter name')
    expect(await attempt(`forms.named({ ['a'.repeat(262_144)]: 1 })`)).toBe('ok')
  })

  it("bounds the pattern matching of one argument in all, without holding the host's event loop", async () => {
    expect(await attempt(`forms.codes({ codes: new Array(20_000).fill('x') })`)).toBe(20_000)
    // A million short strings: each match costs RE2 about a microsecond however short the string,
    // and all of them held the host 1.4 s. Reading the 4 MB argument alone takes tens of ms here.
    const { result, stallMs } = await longestStall(() => attempt(`forms.codes({ codes: new Array(1_000_000).fill('x') })`))
    expect(result).toBe('forms.codes: invalid arguments: matching its strings against the input schema\'s patterns takes over 1048576 characters of matching (each string counts its length plus 32); pass fewer or shorter strings in one call')
    expect(stallMs).toBeLessThan(150)
  })

  it('refuses every call of a tool whose pattern RE2 cannot compile, rather than leave it unchecked', async () => {
    expect(await attempt(`forms.longNames({ name: 'abc' })`)).toMatch(/^forms\.longNames: a pattern of its input schema cannot run on the linear-time engine \(.*invalid character class range.*\); the tool takes no call until its schema is fixed$/)
  })

  it('runs no format check: format is an annotation', async () => {
    expect(await attempt(`forms.annotated({ mail: 'not an address' })`)).toBe('not an address')
  })

  it('refuses at definition a pattern the engine cannot run, naming the tool, the pattern and where it is', () => {
    const define = (pattern: string) => () => defineToolGroup({ global: 'g', tools: { t: { inputSchema: { type: 'object', properties: { code: { type: 'string', pattern } } }, run: () => null } } })
    expect(define('^(a)\\1$')).toThrow('g.t: the input schema\'s pattern "^(a)\\\\1$" at $.properties.code.pattern uses the backreference "\\\\1", which a linear-time engine cannot run; rewrite it without that construct')
    expect(define('^(?=.*\\d).{8,}$')).toThrow('g.t: the input schema\'s pattern "^(?=.*\\\\d).{8,}$" at $.properties.code.pattern uses lookahead "(?=", which a linear-time engine cannot run; rewrite it without that construct')
    expect(define('(?<!x)y')).toThrow(/uses lookbehind "\(\?<!"/)
    expect(define('^.{0,5000}$')).toThrow(/uses the repetition \{0,5000\} counts past 1000/)
    expect(() => defineToolGroup({ global: 'g', tools: { t: { inputSchema: { type: 'object', patternProperties: { '(?!x)': {} } }, run: () => null } } })).toThrow(/at \$\.patternProperties\["\(\?!x\)"\] uses lookahead/)
    // A pattern in data (an enum, a default) is not a pattern.
    expect(() => defineToolGroup({ global: 'g', tools: { t: { inputSchema: { type: 'object', default: { pattern: '(?=x)' } }, run: () => null } } })).not.toThrow()
  })
})

const listed = defineToolGroup({
  global: 'lists',
  tools: {
    tag: {
      inputSchema: { type: 'object', properties: { tags: { type: 'array', uniqueItems: true, items: { type: 'object', properties: { name: { type: 'string' } } } } } },
      run: ({ tags }) => tags.length,
    },
    anything: {
      inputSchema: { type: 'object', properties: { values: { type: 'array', uniqueItems: true } } },
      run: ({ values }) => values.length,
    },
    either: {
      inputSchema: { type: 'object', properties: { values: { anyOf: [{ type: 'string' }, { type: 'array', uniqueItems: true, items: { type: 'array' } }] } } },
      run: () => 'ok',
    },
  },
})

describe('uniqueItems in linear time', () => {
  let env: Awaited<ReturnType<typeof startRuntime>>
  beforeAll(async () => {
    env = await startRuntime({ isolation: 'thread', timeoutMs: 10_000 })
  })
  afterAll(() => env.dispose())

  const attempt = async (call: string) => (await env.run(`return await ${call}.catch((error) => error.message)`, { bindings: [listed.namespace] })).value

  it("refuses a duplicate among 50 000 objects and takes 50 000 distinct ones, without holding the host's event loop", async () => {
    // Ajv compared every pair: 20 000 held the host 5 s. Reading the argument alone takes 30-40 ms here.
    const tags = `Array.from({ length: 50_000 }, (_, i) => ({ name: 't' + i }))`
    const distinct = await longestStall(() => attempt(`lists.tag({ tags: ${tags} })`))
    expect(distinct.result).toBe(50_000)
    expect(distinct.stallMs).toBeLessThan(150)
    const duplicated = await longestStall(() => attempt(`lists.tag({ tags: [...${tags}, { name: 't7' }] })`))
    expect(duplicated.result).toBe('lists.tag: invalid arguments: $.tags must NOT have duplicate items (items ## 7 and 50000 are identical)')
    expect(duplicated.stallMs).toBeLessThan(150)
  })

  it("refuses an argument whose arrays pass 1 048 576 characters of JSON compared, naming the array, without holding the host's event loop", async () => {
    const { result, stallMs } = await longestStall(() => attempt(`lists.tag({ tags: Array.from({ length: 70_000 }, (_, i) => ({ name: 't' + i })) })`))
    expect(result).toBe('lists.tag: invalid arguments: $.tags is too large to check for duplicate items (uniqueItems): an argument\'s arrays are compared on at most 1048576 characters of JSON; pass fewer or smaller items in one call')
    expect(stallMs).toBeLessThan(150)
    // One large item is never written: an array of one has no duplicate.
    expect(await attempt(`lists.anything({ values: ['x'.repeat(2_000_000)] })`)).toBe(1)
    expect(await attempt(`lists.anything({ values: [1, 'x'.repeat(2_000_000)] })`)).toMatch(/^lists\.anything: invalid arguments: \$\.values is too large to check/)
    // Nor are the keys of an object surely over what is left of the bound sorted: the string
    // before it leaves about half, and its 200 000 keys (within the host's 262 144 per object)
    // would write at least 800 000 characters.
    expect(await attempt(`lists.anything({ values: ['x'.repeat(500_000), Object.fromEntries(Array.from({ length: 200_000 }, (_, i) => ['k' + (i * 7919 % 200_000), i]))] })`)).toMatch(/^lists\.anything: invalid arguments: \$\.values is too large to check/)
  })

  it('compares as JSON does: key order ignored, arrays in order, a number however written, a string never a number', async () => {
    expect(await attempt(`lists.anything({ values: [{ a: 1, b: [1, 2] }, { b: [2, 1], a: 1 }, [1, [2, { x: 1, y: 2 }]], [1, [2, { x: 1 }]], '1', 1, null, 0, false, '', [], {}] })`)).toBe(12)
    expect(await attempt(`lists.anything({ values: [{ a: 1, b: [1, 2] }, { b: [1, 2], a: 1.0 }] })`)).toBe('lists.anything: invalid arguments: $.values must NOT have duplicate items (items ## 0 and 1 are identical)')
    expect(await attempt(`lists.anything({ values: [0, [1, [2, { x: 1, y: 2 }]], [1, [2, { y: 2, x: 1 }]]] })`)).toBe('lists.anything: invalid arguments: $.values must NOT have duplicate items (items ## 1 and 2 are identical)')
    expect(await attempt(`lists.anything({ values: ['a', 'b', 'a'] })`)).toBe('lists.anything: invalid arguments: $.values must NOT have duplicate items (items ## 0 and 2 are identical)')
  })

  it('compares items nested 50 000 deep without running out of stack', async () => {
    const nested = `(() => { let value = 'end'; for (let i = 0; i < 50_000; i++) value = [value]; return value })()`
    expect(await attempt(`lists.anything({ values: [${nested}, ${nested}] })`)).toBe('lists.anything: invalid arguments: $.values must NOT have duplicate items (items ## 0 and 1 are identical)')
    expect(await attempt(`lists.anything({ values: [${nested}, [${nested}]] })`)).toBe(2)
  })

  it('holds under anyOf', async () => {
    expect(await attempt(`lists.either({ values: [[1, { a: 2, b: 3 }], [1, { b: 3, a: 2 }]] })`)).toMatch(/^lists\.either: invalid arguments: /)
    expect(await attempt(`lists.either({ values: [[1, { a: 2 }], [1, { a: 3 }]] })`)).toBe('ok')
  })
})
