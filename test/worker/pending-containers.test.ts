/**
 * What the host holds for the arguments of a run's calls in flight is bounded by their lists and
 * objects as well as their bytes: a list costs the host tens of bytes however short its JSON.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { PtcBindingNamespace } from 'ptc-runtime'
import { startRuntime } from '../helpers/runtime.js'

const MAX_PENDING_CONTAINERS = 2_097_152

describe.each([
  ['the thread tier', { isolation: 'thread' as const }],
  ['the default tier', {}],
])('lists and objects of calls in flight, on %s', (_tier, config) => {
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
    },
  }
  beforeAll(async () => {
    env = await startRuntime({ ...config, timeoutMs: 30_000 })
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
      settled: [800_000, 800_000, `tools.held was not called: its arguments hold 800001 lists and objects, which would bring those of this run's calls in flight over ${MAX_PENDING_CONTAINERS}, the most the host holds for them; await calls before making more, or pass flatter or fewer values`],
      after: 800_000,
    })
  })
})
