/**
 * `node bench/discovery.mjs`: the size of the ready tool's description for 10, 100 and 2 000
 * generated tools (groups of up to 100 `verb_noun` tools with a described argument and a
 * result schema), with discovery as configured by default and with it off; and how long one
 * `catalog.search` takes over 2 000 tools on the host. Characters are exact; tokens are counted
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
const search = createRunCodeTool({ runtime, groups: groups(2000) }).bindings.at(-1).functions.search
const signal = new AbortController().signal
await search(['archive an invoice', { limit: 10 }], { signal })
const started = performance.now()
for (let round = 0; round < 100; round++) await search(['archive an invoice', { limit: 10 }], { signal })
console.log(`catalog.search over 2000 tools: ${((performance.now() - started) / 100).toFixed(2)} ms per query (host side, after the first)`)
await ctx.fiber.dispose()
