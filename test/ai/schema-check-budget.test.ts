import { tool } from 'ai'
import { z } from 'zod'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type PtcRuntime, createPtcRuntime } from 'ptc-runtime'
import { fromAiSdkTools } from 'ptc-runtime/ai'
import { longestStall } from '../helpers/stall.js'

/** How many times the tool's `execute` ran. */
let executed = 0
// The JSON Schema Ajv sees is a plain array of strings (formats are annotations), so only Zod's own parse is slow.
const tools = {
  fetchAll: tool({
    inputSchema: z.object({ urls: z.array(z.url()) }),
    execute: ({ urls }) => {
      executed++
      return urls.length
    },
  }),
}
const BUDGET_MS = 200
const CALLS = 24
const budgetSpent = new RegExp(
  `^web\\.fetchAll: checking this run's arguments against input schemas has taken (\\d+) ms of the host's thread, reaching its budget of ${BUDGET_MS} ms \\(maxSchemaCheckMsPerRun\\); pass fewer or simpler items per call, or finish the work in another run$`,
)

describe("an AI SDK tool's own schema parse", () => {
  let runtime: PtcRuntime
  let dispose: () => Promise<void>
  beforeAll(async () => ({ runtime, dispose } = await createPtcRuntime({ isolation: 'thread', poolSize: 1 })))
  afterAll(() => dispose())

  it("is charged to the run's budget of schema checking, so a run of slow parses holds the host's thread about that budget, and the calls past it are refused before execute", async () => {
    const group = await fromAiSdkTools(tools, { global: 'web', maxSchemaCheckMsPerRun: BUDGET_MS })
    const run = (program: string) => runtime.run(runtime.resolve({ program, bindings: [group.namespace], timeoutMs: 30_000 }))
    // 80 000 empty strings (240 KB): Zod makes an issue of each, some 80 to 350 ms a call here, all of it on the host's thread.
    const program = `const urls = new Array(80_000).fill('')
      const settled = await Promise.allSettled(Array.from({ length: ${CALLS} }, () => web.fetchAll({ urls })))
      return settled.map((entry) => entry.status === 'fulfilled' ? 'ok' : entry.reason.message)`
    executed = 0
    const { result, heldMs } = await longestStall(() => run(program))
    expect(result.error).toBeUndefined()
    const answers = result.value as string[]
    const refused = answers.filter((answer) => budgetSpent.test(answer))
    // Every parse that ran spent 50 ms or more of the 200: most calls never reach Zod.
    expect(refused.length).toBeGreaterThanOrEqual(CALLS - 6)
    expect(answers.every((answer) => answer !== 'ok')).toBe(true)
    expect(executed).toBe(0)
    // Before, every parse ran: 24 of them held the host's thread 2 to 8 s. Now the budget, one stopped parse past it, and the host's own reading.
    expect(heldMs).toBeLessThan(BUDGET_MS + 250 + 700)
    // The budget is the run's: the next run's calls are parsed and reach execute.
    const next = await run(`return await web.fetchAll({ urls: ['https://example.com/a'] })`)
    expect(next.value).toBe(1)
    expect(executed).toBe(1)
  })

  it("charges a parse that goes on past its first await (an async refinement) for all its time until it settles, which the watchdog cannot follow", async () => {
    let tagged = 0
    const asyncTools = {
      tagAll: tool({
        // Zod finishes each item's refinement after an await: past the watchdog, in microtasks of the same turn.
        inputSchema: z.object({ tags: z.array(z.string().refine(async (tag) => tag.length > 0, 'empty tag')) }),
        execute: ({ tags }) => (tagged++, tags.length),
      }),
    }
    const budgetMs = 600
    const group = await fromAiSdkTools(asyncTools, { global: 'web', maxSchemaCheckMsPerRun: budgetMs })
    const program = `const tags = new Array(60_000).fill('')
      const answers = []
      for (let i = 0; i < ${CALLS}; i++) answers.push(await web.tagAll({ tags }).then(() => 'ok', (error) => error.message))
      return answers`
    const result = await runtime.run(runtime.resolve({ program, bindings: [group.namespace], timeoutMs: 30_000 }))
    expect(result.error).toBeUndefined()
    const answers = result.value as string[]
    const spent = new RegExp(budgetSpent.source.replace('fetchAll', 'tagAll').replace(`${BUDGET_MS} ms`, `${budgetMs} ms`))
    const parsed = answers.filter((answer) => answer.startsWith('web.tagAll: invalid arguments: $.tags[0]: empty tag'))
    const refused = answers.filter((answer) => spent.test(answer))
    expect([parsed.length + refused.length, refused.length > 0, tagged]).toEqual([CALLS, true, 0])
    // What one parse is charged, against the clock around it: most of its time comes after its
    // first await, so charged for its first part only it was a third of it or less.
    const ledger = { schemaCheckMs: 0 }
    const call = { signal: new AbortController().signal, hold: async () => undefined, argumentBytes: 180_000, ledger }
    const started = performance.now()
    await expect(group.namespace.functions.tagAll!({ tags: new Array(60_000).fill('') }, call)).rejects.toThrow('empty tag')
    expect(ledger.schemaCheckMs).toBeGreaterThan(0.8 * (performance.now() - started))
  })
})
