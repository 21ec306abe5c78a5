/**
 * What the host holds for the arguments of a run's calls in flight is bounded by their values
 * (lists, objects, strings, numbers, booleans, nulls) as well as their bytes: a value costs the
 * host tens of bytes however short its JSON.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { PtcBindingNamespace } from 'ptc-runtime'
import { startRuntime } from '../helpers/runtime.js'

const MAX_PENDING_VALUES = 2_097_152

describe.each([
  ['the thread tier', { isolation: 'thread' as const }],
  ['the default tier', {}],
])('values of calls in flight, on %s', (_tier, config) => {
  let env: Awaited<ReturnType<typeof startRuntime>>
  // Calls wait for the gate, so those in flight stay in flight however slowly the program builds the next.
  let open!: () => void
  let gate = new Promise<void>((resolve) => (open = resolve))
  const tools: PtcBindingNamespace = {
    global: 'tools',
    functions: {
      held: async (args: unknown) => {
        await gate
        return Array.isArray(args) ? args.length : 0
      },
      open: async () => {
        open()
        return null
      },
      // Settles only when its time budget aborts it, past which its value is dropped.
      stuck: (_args: unknown, call) => new Promise((resolve) => call.signal.addEventListener('abort', () => resolve(null))),
    },
    limits: { stuck: { timeoutMs: 100 } },
  }
  const lists = 'const lists = () => Array.from({ length: 800_000 }, () => [])'
  const refusal = (values: number) =>
    `tools.held was not called: its arguments hold ${values} values, which would bring those of this run's calls in flight over ${MAX_PENDING_VALUES} (lists, objects, strings, numbers, booleans and nulls), the most the host holds for them; await calls before making more, or pass fewer values`
  beforeAll(async () => {
    env = await startRuntime({ ...config, retainState: true, timeoutMs: 30_000 })
  })
  afterAll(() => env.dispose())

  it('refuses the call that would take them past the bound, naming it, and takes another once those in flight settled', async () => {
    gate = new Promise<void>((resolve) => (open = resolve))
    const result = await env.run(`
      const lists = () => Array.from({ length: 800_000 }, () => [])
      const first = tools.held(lists())
      const second = tools.held(lists())
      const third = await tools.held(lists()).catch((error) => error.message)
      await tools.open()
      const after = await tools.held(lists())
      return { settled: [await first, await second, third], after }`, { bindings: [tools] })
    expect(result.error).toBeUndefined()
    expect(result.value).toEqual({
      settled: [800_000, 800_000, refusal(800_001)],
      after: 800_000,
    })
  })

  it('counts strings, numbers and literals as the host holds them, not lists and objects alone', async () => {
    gate = new Promise<void>((resolve) => (open = resolve))
    const result = await env.run(`
      const strings = () => new Array(800_000).fill('ab')
      const first = tools.held(strings())
      const second = tools.held(Array.from({ length: 800_000 }, (_, i) => (i % 2 ? i : null)))
      const third = await tools.held(strings()).catch((error) => error.message)
      await tools.open()
      return [await first, await second, third]`, { bindings: [tools] })
    expect(result.error).toBeUndefined()
    expect(result.value).toEqual([800_000, 800_000, refusal(800_001)])
  })

  it('gives back what calls that ran past their time budget held, once their failures are written', async () => {
    gate = new Promise<void>((resolve) => (open = resolve))
    const result = await env.run(`
      ${lists}
      const timedOut = await Promise.all([tools.stuck(lists()), tools.stuck(lists())].map((call) => call.catch((error) => error.message)))
      const first = tools.held(lists())
      const second = tools.held(lists())
      await tools.open()
      return { timedOut, after: [await first, await second] }`, { bindings: [tools] })
    expect(result.error).toBeUndefined()
    const message = 'tools.stuck did not finish within its time budget of 100 ms (timeoutMs)'
    expect(result.value).toEqual({ timedOut: [message, message], after: [800_000, 800_000] })
  })

  it("leaves a retained owner's next run the whole bound when a run ends with calls in flight", async () => {
    const owner = {}
    gate = new Promise<void>((resolve) => (open = resolve))
    const left = await env.run(`
      ${lists}
      tools.held(lists())
      tools.held(lists())
      globalThis.kept = 'kept'
      return 'left in flight'`, { bindings: [tools], stateOwner: owner })
    expect(left.value).toBe('left in flight')
    expect(left.calls.map((call) => call.outcome)).toEqual(['aborted', 'aborted'])
    // Their tools settle after the run: the replies are dropped.
    open()
    gate = new Promise<void>((resolve) => (open = resolve))
    const next = await env.run(`
      ${lists}
      const first = tools.held(lists())
      const second = tools.held(lists())
      await tools.open()
      return [globalThis.kept, await first, await second]`, { bindings: [tools], stateOwner: owner })
    expect(next.error).toBeUndefined()
    expect(next.value).toEqual(['kept', 800_000, 800_000])
    await env.runtime.release(owner)
  })
})
