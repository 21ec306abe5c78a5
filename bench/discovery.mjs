/**
 * `node bench/discovery.mjs`: the size of the ready tool's description for 10, 100 and 2 000
 * generated tools (groups of up to 100 `verb_noun` tools with a described argument and a
 * result schema), with discovery as configured by default and with it off; and how long
 * `catalog.search` and `catalog.describe` take over 2 000 tools on the host: an ordinary query
 * as the baseline, and the worst inputs the bounds admit, each against a bound of a few ms. Characters are exact; tokens are counted
 * with the tokenizer `PTC_TOKENIZER` names (a module exporting `encode`, e.g. gpt-tokenizer's
 * o200k_base), or estimated at four characters per token without one.
 */
import { Context } from 'cordis'
import { WorkerPtcRuntime, createRunCodeTool, defineToolGroup } from '../dist/index.js'

const NOUNS = ['issue', 'comment', 'label', 'member', 'file', 'event', 'report', 'invoice', 'webhook', 'project']
const VERBS = ['create', 'get', 'list', 'update', 'delete', 'archive', 'restore', 'export', 'share', 'watch']
const encode = process.env.PTC_TOKENIZER ? (await import(process.env.PTC_TOKENIZER)).encode : undefined
const tokens = (text) => (encode ? encode(text).length : Math.round(text.length / 4))

function groups(total) {
  const result = []
  for (let start = 0; start < total; start += 100) {
    const service = `service${result.length + 1}`
    const tools = {}
    for (let index = start; index < Math.min(total, start + 100); index++) {
      const verb = VERBS[index % 10]
      const noun = NOUNS[Math.floor(index / 10) % 10]
      tools[`${verb}_${noun}`] = {
        description: `${verb} a ${noun} in ${service}.`,
        inputSchema: { type: 'object', properties: { id: { type: 'string', description: `The ${noun} id` }, note: { type: 'string' } }, required: ['id'] },
        outputSchema: { type: 'object', properties: { ok: { type: 'boolean' } }, required: ['ok'] },
        run: () => ({ ok: true }),
      }
    }
    result.push(defineToolGroup({ global: service, description: `The ${service} API.`, tools }))
  }
  return result
}

const ctx = new Context()
await ctx.plugin(WorkerPtcRuntime, { isolation: 'thread', poolSize: 0 })
const runtime = ctx.ptcRuntime
console.log(`tools  discovery  description chars  tokens${encode ? '' : ' (chars/4)'}  | never: chars  tokens`)
for (const total of [10, 100, 2000]) {
  const set = groups(total)
  const chosen = createRunCodeTool({ runtime, groups: set })
  const never = createRunCodeTool({ runtime, groups: set, discovery: 'never' })
  console.log(`${String(total).padStart(5)}  ${String(chosen.discovery).padEnd(9)}  ${String(chosen.description.length).padStart(17)}  ${String(tokens(chosen.description)).padStart(6)}  | ${String(never.description.length).padStart(12)}  ${String(tokens(never.description)).padStart(6)}`)
}
const { functions } = createRunCodeTool({ runtime, groups: groups(2000) }).bindings.at(-1)
const signal = new AbortController().signal
/** Milliseconds per call of `member` with `args`, the mean of `rounds` after one warm-up; a refusal counts like an answer. */
async function timed(member, args, rounds = 200) {
  const once = () => functions[member](args, { signal }).catch(() => undefined)
  for (let round = 0; round < 20; round++) await once()
  const started = performance.now()
  for (let round = 0; round < rounds; round++) await once()
  return (performance.now() - started) / rounds
}
// The worst a program may ask within the bounds: as many distinct words as a query may hold,
// each one a word of every tool's document; an unknown name as long as a name may be; an
// unknown name as long as the tools' own; the letters of a tool name in another order, which
// no cheap bound rules out; and a genuine typo.
const common = ['in', 'service1', 'a', 'the', 'id', 'note', ...NOUNS, ...VERBS].slice(0, 32)
const random = (length) => Array.from({ length }, (_, index) => 'qzxjkvwy'[(index * 7) % 8]).join('')
const baseline = await timed('search', ['archive an invoice', { limit: 10 }])
const worst = [
  ['catalog.search, 32 words every tool holds', await timed('search', [common.join(' '), { limit: 50 }])],
  ['catalog.search, over the word limit (refused)', await timed('search', [Array.from({ length: 33 }, (_, index) => `w${index}`).join(' ')])],
  ['catalog.describe, unknown 256-character name', await timed('describe', [random(256)])],
  ['catalog.describe, unknown 30-character name', await timed('describe', [random(30)])],
  ['catalog.describe, a tool name\'s letters shuffled', await timed('describe', ['eeihvs1ctcr._ivvaeeinorsic'])],
  ['catalog.describe, a typo of a tool name', await timed('describe', ['service7.archiv_invoice'])],
  ['catalog.describe, 250 000 characters (refused)', await timed('describe', ['x'.repeat(250_000)])],
]
// "A few milliseconds" at 2 000 tools: the bound each worst case must stay under.
const LIMIT_MS = 5
console.log(`catalog over 2000 tools, host side: an ordinary search takes ${baseline.toFixed(2)} ms (baseline)`)
for (const [what, ms] of worst) {
  console.log(`  ${what.padEnd(48)} ${ms.toFixed(2).padStart(6)} ms  ${(ms / baseline).toFixed(1).padStart(5)}x baseline  ${ms <= LIMIT_MS ? 'within' : 'OVER'} the ${LIMIT_MS} ms bound`)
}
await ctx.fiber.dispose()
