import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { PtcBindingNamespace } from 'ptc-runtime'
import { startRuntime } from '../helpers/runtime.js'

// The bounds of src/protocol/messages.ts, as the program reads them.
const MAX_OBJECT_KEYS = 262_144
const MAX_MESSAGE_KEYS = 1_048_576
const MAX_MESSAGE_VALUES = 2_097_152
const RULE = `the host reads at most ${MAX_OBJECT_KEYS} keys in one object, and ${MAX_MESSAGE_KEYS} keys and ${MAX_MESSAGE_VALUES} values (lists, objects, strings, numbers, booleans and nulls) in a completion or a call's arguments`
const CALL_HINT = 'pass fewer keys (a list of entries rather than an object keyed by id) or fewer values, or split the call'

/** A program expression: an object of `count` distinct keys, each starting with the string `tag` (an expression). */
const table = (count: number, tag = "'k'") => `Object.fromEntries(Array.from({ length: ${count} }, (_, i) => [${tag} + i.toString(36), 0]))`

describe.each([
  ['the thread tier', { isolation: 'thread' as const }],
  ['the default tier', {}],
])('program data past the key bounds, on %s', (_tier, config) => {
  let env: Awaited<ReturnType<typeof startRuntime>>
  let called: number[] = []
  const tools: PtcBindingNamespace = {
    global: 'tools',
    functions: {
      count: async (args: unknown) => {
        const keys = Object.keys(args as object).length
        called.push(keys)
        return keys
      },
    },
  }
  beforeAll(async () => {
    env = await startRuntime({ ...config, retainState: true, timeoutMs: 20_000 })
  })
  afterAll(() => env.dispose())

  const run = (program: string, stateOwner?: object) => env.run(program, { bindings: [tools], ...(stateOwner === undefined ? {} : { stateOwner }) })

  it('rejects a call whose argument holds an object past MAX_OBJECT_KEYS in the program, with a TypeError it catches', async () => {
    called = []
    const result = await run(`
      const refused = await tools.count({ rows: ${table(MAX_OBJECT_KEYS + 1)} }).then(() => 'called', (error) => [error instanceof TypeError, error.message])
      return { refused, fits: await tools.count(${table(MAX_OBJECT_KEYS)}) }`)
    expect(result.error).toBeUndefined()
    expect(result.value).toEqual({
      refused: [true, `tools.count: the arguments hold an object of more than ${MAX_OBJECT_KEYS} keys at $.rows, and ${RULE}; ${CALL_HINT}`],
      fits: MAX_OBJECT_KEYS,
    })
    expect(called).toEqual([MAX_OBJECT_KEYS])
  })

  it.each([
    ['lists', '() => []'],
    ['strings', "(_, i) => 'ab'"],
    ['numbers and literals', '(_, i) => (i % 3 === 0 ? i : i % 3 === 1 ? null : true)'],
  ])('rejects a call whose argument holds more than MAX_MESSAGE_VALUES values, %s, counting each as the host does', async (_name, element) => {
    called = []
    // The arguments' list and MAX_MESSAGE_VALUES elements: one past the bound.
    const result = await run(`
      const list = (count) => Array.from({ length: count }, ${element})
      const refused = await tools.count(list(${MAX_MESSAGE_VALUES})).then(() => 'called', (error) => [error instanceof TypeError, error.message])
      return { refused, fits: await tools.count(list(${MAX_MESSAGE_VALUES - 1})) }`)
    expect(result.error).toBeUndefined()
    expect(result.value).toEqual({
      refused: [true, `tools.count: the arguments hold more than ${MAX_MESSAGE_VALUES} values in all at $[${MAX_MESSAGE_VALUES - 1}], and ${RULE}; ${CALL_HINT}`],
      fits: MAX_MESSAGE_VALUES - 1,
    })
    expect(called).toEqual([MAX_MESSAGE_VALUES - 1])
  })

  it('fails a completion of more than MAX_MESSAGE_VALUES strings with invalid-output, naming the path and the rule', async () => {
    const refused = await run(`return new Array(${MAX_MESSAGE_VALUES}).fill('ab')`)
    expect(refused.error).toEqual({
      kind: 'invalid-output',
      message: `the completion value holds more than ${MAX_MESSAGE_VALUES} values in all at $[${MAX_MESSAGE_VALUES - 1}], and ${RULE}; return fewer keys (a list of entries rather than an object keyed by id) or fewer values (a summary)`,
    })
    const fits = await run(`return new Array(${MAX_MESSAGE_VALUES - 1}).fill('ab')`)
    expect(fits.error).toBeUndefined()
    expect((fits.value as string[]).length).toBe(MAX_MESSAGE_VALUES - 1)
  })

  it('fails a completion holding an object past MAX_OBJECT_KEYS with invalid-output, naming the path and the rule, and keeps the owner\'s environment', async () => {
    const owner = {}
    expect((await run(`globalThis.kept = 'still here'`, owner)).error).toBeUndefined()
    const result = await run(`return { rows: ${table(MAX_OBJECT_KEYS + 1)} }`, owner)
    expect(result.error).toEqual({
      kind: 'invalid-output',
      message: `the completion value holds an object of more than ${MAX_OBJECT_KEYS} keys at $.rows, and ${RULE}; return fewer keys (a list of entries rather than an object keyed by id) or fewer values (a summary)`,
    })
    const after = await run('return kept', owner)
    expect(after.value).toBe('still here')
    expect(after.output).toEqual([])
    await env.runtime.release(owner)
  })

  it('sends calls made together whose arguments pass MAX_MESSAGE_VALUES in all in more than one message, and answers each', async () => {
    called = []
    // Each call's list of strings fits; the two together would not, so the second starts the next message.
    const result = await run(`return await Promise.all([0, 1].map(() => tools.count(new Array(${MAX_MESSAGE_VALUES / 2 + 1}).fill('ab'))))`)
    expect(result.error).toBeUndefined()
    expect(result.value).toEqual([MAX_MESSAGE_VALUES / 2 + 1, MAX_MESSAGE_VALUES / 2 + 1])
  })

  it('sends calls made together whose arguments pass MAX_MESSAGE_KEYS in all in more than one message, and answers each', async () => {
    called = []
    // Four full objects fill what the host reads in one message; the fifth call of the same turn starts the next.
    const result = await run(`
      const made = ['a', 'b', 'c', 'd'].map((tag) => tools.count(${table(MAX_OBJECT_KEYS, 'tag')}))
      made.push(tools.count({ one: 1 }))
      return await Promise.all(made)`)
    expect(result.error).toBeUndefined()
    expect(result.value).toEqual([MAX_OBJECT_KEYS, MAX_OBJECT_KEYS, MAX_OBJECT_KEYS, MAX_OBJECT_KEYS, 1])
    expect(called).toEqual([MAX_OBJECT_KEYS, MAX_OBJECT_KEYS, MAX_OBJECT_KEYS, MAX_OBJECT_KEYS, 1])
  })
})
