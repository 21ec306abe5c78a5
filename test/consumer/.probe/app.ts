
import { Context } from 'cordis'
import { WorkerPtcRuntime, defineToolGroup, createRunCodeTool, type PtcBindingNamespace } from 'ptc-runtime'
const weather: PtcBindingNamespace = { global: 'weather', functions: { forecast: async ({ city }: { city: string }) => ({ city }) } }
const bindings = [
  { global: 'a', functions: { one: async () => 1 } },
  { global: 'b', functions: { two: async () => 2 } },
]
const ctx = new Context()
await ctx.plugin(WorkerPtcRuntime, { timeoutMs: 1000 })
const runtime = ctx.ptcRuntime
await runtime.run(runtime.resolve({ program: '', bindings }))
await runtime.run(runtime.resolve({ program: '', bindings: [weather] }))
const g = defineToolGroup({ global: 'g', tools: { t: { inputSchema: { type: 'object' }, run: ({ city }) => city } } })
createRunCodeTool({ runtime, groups: [g] })
