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
  const tools: PtcBindingNamespace = {
    global: 'tools',
    functions: {
      slow: async (args: unknown) => {
        await new Promise((resolve) => setTimeout(resolve, 300))
        return Array.isArray(args) ? args.length : 0
      },
    },
  }
  beforeAll(async () => {
    env = await startRuntime({ ...config, timeoutMs: 20_000 })
  })
  afterAll(() => env.dispose())

  it('refuses the call that would take them past the bound, naming it, and takes another once those in flight settled', async () => {
    const result = await env.run(`
      const lists = () => Array.from({ length: 800_000 }, () => [])
      const settled = await Promise.allSettled([tools.slow(lists()), tools.slow(lists()), tools.slow(lists())])
      const after = await tools.slow(lists())
      return { settled: settled.map((outcome) => outcome.status === 'fulfilled' ? outcome.value : outcome.reason.message), after }`, { bindings: [tools] })
    expect(result.error).toBeUndefined()
    expect(result.value).toEqual({
      settled: [800_000, 800_000, `tools.slow was not called: its arguments hold 800001 lists and objects, which would bring those of this run's calls in flight over ${MAX_PENDING_CONTAINERS}, the most the host holds for them; await calls before making more, or pass flatter or fewer values`],
      after: 800_000,
    })
  })
})
