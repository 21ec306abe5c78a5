// Latency of run_code's typecheck: the first check (TypeScript loads, the standard library and
// the declarations are parsed) and the checks after it (only the program is read again).
import { Context } from 'cordis'
import { createRunCodeTool, defineToolGroup } from 'ptc-runtime'
import { WorkerPtcRuntime } from 'ptc-runtime/cordis'

const weather = defineToolGroup({
  global: 'weather',
  tools: {
    forecast: {
      inputSchema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
      outputSchema: { type: 'object', properties: { highC: { type: 'number' } }, required: ['highC'] },
      run: () => ({ highC: 14 }),
    },
  },
})
const ctx = new Context()
await ctx.plugin(WorkerPtcRuntime, { language: 'typescript', isolation: 'thread', poolSize: 0 })
let started = performance.now()
const tool = createRunCodeTool({ runtime: ctx.ptcRuntime, groups: [weather], typecheck: true })
const created = performance.now() - started
const wrong = (n) => `const day = await weather.forecast({ town: 'Oslo${n}' })\nreturn day.highC`
started = performance.now()
await tool.execute({ program: wrong(0) })
const first = performance.now() - started
const times = []
for (let n = 1; n <= 50; n++) {
  started = performance.now()
  await tool.execute({ program: wrong(n) })
  times.push(performance.now() - started)
}
times.sort((a, b) => a - b)
console.log(`create ${created.toFixed(1)} ms, first check ${first.toFixed(1)} ms, later checks median ${times[25].toFixed(1)} ms, p90 ${times[45].toFixed(1)} ms`)
await tool.close()
await ctx.fiber.dispose()
