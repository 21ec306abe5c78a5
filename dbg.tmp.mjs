import { Context } from 'cordis'
import { createRunCodeTool, defineToolGroup, WorkerPtcRuntime } from './dist/index.js'
const weather = defineToolGroup({ global: 'weather', tools: {
  forecast: { inputSchema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] }, outputSchema: { type: 'object', properties: { highC: { type: 'number' } }, required: ['highC'] }, run: () => ({ highC: 14 }) },
} })
const ctx = new Context()
await ctx.plugin(WorkerPtcRuntime, { language: 'typescript', isolation: 'thread', poolSize: 0, timeoutMs: 30000 })
const TIME_BOMB = `type L = 'a'|'b'|'c'|'d'|'e'|'f'|'g'|'h'|'i'|'j'|'k'|'l'|'m'|'n'|'o'|'p'
type Q1 = \`\${L}\${L}\${L}\${L}1\`
type Q2 = \`\${L}\${L}\${L}\${L}2\`
type M1 = { [K in Q1]: { [J in K]: [K, J] } }
type M2 = { [K in Q2]: { [J in K]: [K, J] } }
declare const a: M1, b: M2
const x: M2 = a
const y: M1 = b
return 1`
const GOOD = "const day = await weather.forecast({ city: 'Oslo' })\nreturn day.highC"
const bombed = createRunCodeTool({ runtime: ctx.ptcRuntime, groups: [weather], typecheck: true, timeoutMs: 3000 })
const other = createRunCodeTool({ runtime: ctx.ptcRuntime, groups: [weather], typecheck: true, timeoutMs: 20_000 })
const s = performance.now()
const r = await Promise.all([bombed.execute({ program: TIME_BOMB }).then((x) => [performance.now() - s, x]), other.execute({ program: GOOD }).then((x) => [performance.now() - s, x])])
console.log(r)
await ctx.fiber.dispose()
process.exit(0)
