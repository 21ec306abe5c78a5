/**
 * Schema checks on the host's thread within their bounds: each check that may take long is stopped
 * at its deadline, a run's checks share a budget (maxSchemaCheckMsPerRun), and none walks an
 * argument whole first. These programs make the host do real, hostile work for seconds, so they
 * run in `npm test`, not in `npm run test:quick`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { defineToolGroup } from 'ptc-runtime'
import { startRuntime } from '../helpers/runtime.js'
import { longestStall } from '../helpers/stall.js'

describe('schema checks within their deadline and the run\'s budget', () => {
  let env: Awaited<ReturnType<typeof startRuntime>>
  beforeAll(async () => {
    env = await startRuntime({ isolation: 'thread', timeoutMs: 10_000, maxCalls: 5 })
  })
  afterAll(() => env.dispose())

  it("a large argument's schema check is stopped at its deadline and the call refused, without holding the host's event loop", async () => {
    // A batch of operations, each one of 128 shapes told apart by a const: Ajv tries the shapes in turn.
    const shapes = Array.from({ length: 128 }, (_, i) => ({ type: 'object', properties: { op: { const: `op${i}` }, x: { type: 'number' } }, required: ['op'] }))
    const batch = defineToolGroup({ global: 'batch', tools: { apply: { inputSchema: { type: 'object', properties: { ops: { type: 'array', items: { anyOf: shapes } } } }, run: ({ ops }) => ops.length } } })
    const apply = (op: string, count: number) => env.run(`return await batch.apply({ ops: Array.from({ length: ${count} }, () => ({ op: '${op}', x: 1 })) }).catch((error) => error.message)`, { bindings: [batch.namespace] })
    // Ajv tries every shape of each item: 100 000 items took it about 2 s here, 2 000 about 40 ms.
    const slow = await longestStall(() => apply('op127', 100_000))
    expect(slow.result.value).toBe('batch.apply: invalid arguments: checking them against the input schema took over 250 ms, and was stopped; pass fewer or simpler items in one call')
    expect(slow.result.calls?.map((call) => call.outcome)).toEqual(['refused'])
    expect(slow.stallMs).toBeLessThan(600)
    expect((await apply('op127', 2000)).value).toBe(2000)
  })

  // The union's tag is checked after the recursive property, as Zod's union of objects emits it: each level doubles the work.
  const node = (type: string) => ({ type: 'object', properties: { children: { type: 'array', items: { $ref: '#/$defs/node' } }, type: { const: type } }, required: ['children', 'type'] })
  const outlineSchema = { type: 'object', properties: { tree: { $ref: '#/$defs/node' } }, $defs: { node: { anyOf: [node('group'), node('item')] } } }
  const docs = defineToolGroup({ global: 'docs', tools: { outline: { inputSchema: outlineSchema, run: () => 'outlined' } } })
  const treeOf = (depth: number) => `let tree = { type: 'item', children: [] }\nfor (let i = 1; i < ${depth}; i++) tree = { type: 'item', children: [tree] }`
  const outline = (depth: number) => env.run(`${treeOf(depth)}\nreturn await docs.outline({ tree }).catch((error) => error.message)`, { bindings: [docs.namespace] })
  const stoppedCheck = 'docs.outline: invalid arguments: checking them against the input schema took over 250 ms, and was stopped; pass fewer or simpler items in one call'
  const spentBudget = (limitMs: number) =>
    new RegExp(`^docs\\.outline: checking this run's arguments against input schemas has taken (\\d+) ms of the host's thread, reaching its budget of ${limitMs} ms \\(maxSchemaCheckMsPerRun\\); pass fewer or simpler items per call, or finish the work in another run$`)

  it("a small argument's check of a schema that checks subtrees again, under each shape of a recursive union, is stopped at its deadline", async () => {
    expect((await outline(10)).value).toBe('outlined')
    // 82 values, about 1 KB: 4.4 s of the host's thread before, 30 levels some 35 s.
    const deep = await longestStall(() => outline(30))
    expect(deep.result.value).toBe(stoppedCheck)
    expect(deep.stallMs).toBeLessThan(600)
  })

  it("slow checks one after another hold the host's thread at most the run's budget of schema checking, and the calls past it are refused at once, naming it", async () => {
    // Each check of 30 levels would take some 35 s: each is stopped, and the next call comes.
    const program = `${treeOf(30)}\nconst answers = []\nfor (let i = 0; i < 12; i++) answers.push(await docs.outline({ tree }).catch((error) => error.message))\nreturn answers`
    const { result, heldMs, stallMs } = await longestStall(() => env.run(program, { bindings: [docs.namespace], maxCalls: 20 }))
    expect(result.error).toBeUndefined()
    const answers = result.value as string[]
    const stopped = answers.filter((answer) => answer === stoppedCheck).length
    const refused = answers.filter((answer) => spentBudget(1000).test(answer))
    expect(answers[0]).toBe(stoppedCheck)
    // 250 ms each: four checks spend the budget (the last one may be stopped at what was left of it).
    expect(stopped).toBeLessThanOrEqual(4)
    expect(stopped + refused.length).toBe(12)
    expect(refused.length).toBeGreaterThanOrEqual(8)
    for (const answer of refused) expect(Number(spentBudget(1000).exec(answer)![1])).toBeGreaterThanOrEqual(995)
    // Twelve checks of 250 ms held it 3 s before; the budget is 1 s, and each refusal costs nothing.
    expect(heldMs).toBeLessThan(1600)
    expect(stallMs).toBeLessThan(600)
    expect(result.calls?.map((call) => call.outcome)).toEqual(Array(12).fill('refused'))
    // The budget is the run's: the host serves the next run, whose first slow check has its whole deadline again.
    expect((await outline(10)).value).toBe('outlined')
    expect((await outline(30)).value).toBe(stoppedCheck)
  })

  it("a group's maxSchemaCheckMsPerRun sets the run's budget of schema checking, and must be a positive integer", async () => {
    const tight = defineToolGroup({ global: 'docs', maxSchemaCheckMsPerRun: 300, tools: { outline: { inputSchema: outlineSchema, run: () => 'outlined' } } })
    const program = `${treeOf(30)}\nconst answers = []\nfor (let i = 0; i < 3; i++) answers.push(await docs.outline({ tree }).catch((error) => error.message))\nreturn answers`
    const result = await env.run(program, { bindings: [tight.namespace] })
    const answers = result.value as string[]
    expect(answers[0]).toBe(stoppedCheck)
    expect(answers.slice(1).every((answer) => spentBudget(300).test(answer))).toBe(true)
    for (const bad of [0, 1.5, '300']) {
      expect(() => defineToolGroup({ global: 'a', maxSchemaCheckMsPerRun: bad as number, tools: {} })).toThrow('tool group "a": maxSchemaCheckMsPerRun must be a positive integer (ms)')
    }
  })

  it('a host calling a tool itself, outside any run, has each slow check stopped at its deadline and no budget of runs', async () => {
    const tight = defineToolGroup({ global: 'docs', maxSchemaCheckMsPerRun: 1, tools: { outline: { inputSchema: outlineSchema, run: () => 'outlined' } } })
    let tree: unknown = { type: 'item', children: [] }
    for (let i = 1; i < 30; i++) tree = { type: 'item', children: [tree] }
    const call = { signal: new AbortController().signal, hold: async () => undefined }
    for (let i = 0; i < 2; i++) await expect(tight.namespace.functions.outline!({ tree }, call)).rejects.toThrow(stoppedCheck)
    expect(await tight.namespace.functions.outline!({ tree: { type: 'item', children: [] } }, call)).toBe('outlined')
  })

  it("checks of small arguments, unwatched, are charged to the run's budget too, and the calls past it are refused at once", async () => {
    // Forty patterns, each matched against every property name: a 16 KiB argument does up to 1 MiB of matching.
    const patternProperties = Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`x${i}y`, { type: 'number' }]))
    let runs = 0
    const tagged = defineToolGroup({ global: 'tagged', maxSchemaCheckMsPerRun: 20, tools: { put: { inputSchema: { type: 'object', patternProperties }, run: () => ++runs } } })
    const program = `const fields = Object.fromEntries(Array.from({ length: 400 }, (_, i) => ['field_' + String(i).padStart(24, '0'), 1]))
      const settled = await Promise.allSettled(Array.from({ length: 120 }, () => tagged.put(fields)))
      return settled.map((entry) => entry.status === 'fulfilled' ? 'ok' : entry.reason.message)`
    const result = await env.run(program, { bindings: [tagged.namespace], maxCalls: 200 })
    expect(result.error).toBeUndefined()
    const answers = result.value as string[]
    const spent = new RegExp(`^tagged\\.put: checking this run's arguments against input schemas has taken (\\d+) ms of the host's thread, reaching its budget of 20 ms \\(maxSchemaCheckMsPerRun\\)`)
    const refused = answers.filter((answer) => spent.test(answer)).length
    // Each check takes half a millisecond or more (1.5 ms here): at most some forty run before the 20 ms are spent, and every later call is refused.
    expect(refused).toBeGreaterThanOrEqual(60)
    expect(refused + answers.filter((answer) => answer === 'ok').length).toBe(120)
    expect(answers.indexOf('ok', answers.findIndex((answer) => spent.test(answer)))).toBe(-1)
    expect(runs).toBe(120 - refused)
    // Outside a run there is no budget: the host's own calls are checked as before.
    const call = { signal: new AbortController().signal, hold: async () => undefined, argumentBytes: 100 }
    expect(await tagged.namespace.functions.put!({ field: 1 }, call)).toBe(121 - refused)
  })

  it("the calls a program makes together are started in slices of the host's thread, not all in one turn", async () => {
    // Forty patterns, each matched against every property name: a few ms of checking per call.
    const patternProperties = Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`x${i}y`, { type: 'number' }]))
    const tagged = defineToolGroup({ global: 'tagged', maxSchemaCheckMsPerRun: 60_000, tools: { put: { inputSchema: { type: 'object', patternProperties }, run: () => 'put' } } })
    const program = `const fields = Object.fromEntries(Array.from({ length: 600 }, (_, i) => ['f' + String(i).padStart(5, '0'), 1]))
      const settled = await Promise.all(Array.from({ length: 120 }, () => tagged.put(fields)))
      return settled.length`
    const { result, stallMs } = await longestStall(() => env.run(program, { bindings: [tagged.namespace], maxCalls: 200 }))
    expect(result.error).toBeUndefined()
    expect(result.value).toBe(120)
    // All 120 checks in the turn of their message held the loop about 0.5 s; a slice is 10 ms and
    // one check, and a loaded machine's scheduling alone has stalled the loop 100 ms (CI, Node 22).
    expect(stallMs).toBeLessThan(150)
    // Each call in a message of its own: a port delivers them all in one callback, so they share the turn's slice too.
    const apart = program.replace('const settled = await Promise.all(Array.from({ length: 120 }, () => tagged.put(fields)))', 'const made = []\n      for (let i = 0; i < 120; i++) { made.push(tagged.put(fields)); await null }\n      const settled = await Promise.all(made)')
    expect(apart).not.toBe(program)
    const separate = await longestStall(() => env.run(apart, { bindings: [tagged.namespace], maxCalls: 200 }))
    expect(separate.result.value).toBe(120)
    expect(separate.stallMs).toBeLessThan(150)
  })

  it('a large flat argument is checked without being walked first', async () => {
    const flat = defineToolGroup({ global: 'flat', tools: { take: { inputSchema: { type: 'object' }, run: ({ values }) => values.length } } })
    // Two million zeros (4 MB), about all the values a message may hold: an earlier count of three
    // million held the host's thread about 0.45 s. The run itself takes seconds on a loaded machine
    // (the program builds and sends them), hence its budget.
    const { result, stallMs } = await longestStall(() => env.run('return await flat.take({ values: new Array(2_000_000).fill(0) })', { bindings: [flat.namespace], timeoutMs: 60_000 }))
    expect(result.error).toBeUndefined()
    expect(result.value).toBe(2_000_000)
    expect(stallMs).toBeLessThan(250)
  })

  it('an argument deep enough to overflow the check of a recursive schema is refused, not a failure of the tool', async () => {
    const trees = defineToolGroup({
      global: 'trees',
      tools: { walk: { inputSchema: { $ref: '#/$defs/node', $defs: { node: { type: 'object', properties: { child: { $ref: '#/$defs/node' } } } } }, run: () => 'walked' } },
    })
    const program = 'let deep = {}\nfor (let i = 0; i < 50_000; i++) deep = { child: deep }\nreturn [await trees.walk({ child: {} }), await trees.walk(deep).catch((error) => error.message)]'
    const result = await env.run(program, { bindings: [trees.namespace] })
    expect(result.value).toEqual(['walked', expect.stringMatching(/^trees\.walk: invalid arguments: the input schema could not check them \(Maximum call stack size exceeded\); pass a smaller or shallower argument$/)])
    expect(result.calls?.map((call) => call.outcome)).toEqual(['ok', 'refused'])
  })
})
