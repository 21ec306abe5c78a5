// @ts-check
// `npm run build && node examples/agent-loop.mjs`: how an agent loop offers ptc-runtime to a
// model as one `run_code` tool.
//
// 1. Host tools are described by JSON schemas, as a model API wants them, grouped under the
//    global name programs will call them by.
// 2. `defineToolGroup` turns each group into a binding namespace for the runtime and
//    TypeScript declarations of the same tools for the model.
// 3. `createRunCodeTool` builds the one tool the model sees: its description carries the
//    runtime's `executionInstructions` and the declarations; its `execute` runs a program and
//    answers with the text the model reads next (output, then value or failure, cut to a budget).
// 4. Each program runs with the conversation as its state owner, so a later program sees what
//    an earlier one declared.
// 5. The host has a few hundred tools, too many to declare in the description: the tool lists
//    the groups, and programs find tools with `catalog.search` and `catalog.describe`.
//
// The model here is a stand-in that replays a recorded conversation
// (`agent-loop.conversation.json`), so the example runs offline and deterministically. Swap
// `ReplayModel` for a client of a real model API; nothing else changes. Plain JavaScript with
// JSDoc types, so Node runs it as is.
import { readFileSync } from 'node:fs'
import { Context } from 'cordis'
import { createRunCodeTool, defineToolGroup } from 'ptc-runtime'
import { WorkerPtcRuntime } from 'ptc-runtime/cordis'

/**
 * One message of the conversation, in a shape close to what model APIs use.
 * @typedef {{ role: 'system' | 'user' | 'assistant' | 'tool', content: string,
 *   toolCall?: { name: string, arguments: { program: string } } }} Message
 */

// ---------------------------------------------------------------------------------------------
// The host's data and tools: a small CRM and a currency table, all in memory.

const FIRST = ['Ingrid', 'Lars', 'Sofie', 'Magnus', 'Nora', 'Henrik', 'Emma', 'Jonas', 'Thea', 'Olav']
const LAST = ['Berg', 'Dahl', 'Haugen', 'Lie', 'Moen', 'Nilsen', 'Strand', 'Vik']
const customers = Array.from({ length: 24 }, (_, i) => ({
  id: `C${String(101 + i)}`,
  name: `${FIRST[i % FIRST.length]} ${LAST[(i * 3) % LAST.length]}`,
  country: i % 4 === 3 ? 'SE' : 'NO',
  since: `20${String(15 + (i % 9)).padStart(2, '0')}-0${1 + (i % 9)}-1${i % 10}`,
}))
const orders = customers.flatMap((customer, i) =>
  Array.from({ length: 1 + ((i * 5) % 4) }, (_, k) => ({
    id: `O${1000 + i * 10 + k}`,
    customerId: customer.id,
    total: 150 + ((i * 7919 + k * 104729) % 2400),
    currency: k % 2 === 0 ? 'NOK' : 'EUR',
  })),
)
const RATES = { 'NOK->EUR': 0.085, 'EUR->NOK': 11.76 }

const crm = defineToolGroup({
  global: 'crm',
  description: 'Customer relationship records.',
  errorClass: { name: 'CrmError', memberNameProperty: 'tool' },
  tools: {
    findCustomers: {
      description: 'Customers of one country.',
      inputSchema: {
        type: 'object',
        properties: { country: { type: 'string', description: 'ISO 3166-1 alpha-2 code, e.g. "NO"' } },
        required: ['country'],
      },
      outputSchema: {
        type: 'array',
        items: {
          type: 'object',
          properties: { id: { type: 'string' }, name: { type: 'string' }, since: { type: 'string', description: 'ISO date' } },
          required: ['id', 'name', 'since'],
        },
      },
      run: async ({ country }) => customers.filter((c) => c.country === country).map(({ id, name, since }) => ({ id, name, since })),
    },
    orders: {
      description: "A customer's orders.",
      inputSchema: { type: 'object', properties: { customerId: { type: 'string' } }, required: ['customerId'] },
      outputSchema: {
        type: 'array',
        items: {
          type: 'object',
          properties: {
            id: { type: 'string' },
            total: { type: 'number', description: 'in the order currency' },
            currency: { type: 'string', enum: ['NOK', 'EUR'] },
          },
          required: ['id', 'total', 'currency'],
        },
      },
      run: async ({ customerId }) => {
        if (!customers.some((c) => c.id === customerId)) throw new Error(`no customer ${customerId}`)
        return orders.filter((o) => o.customerId === customerId).map(({ id, total, currency }) => ({ id, total, currency }))
      },
    },
  },
})

const fx = defineToolGroup({
  global: 'fx',
  description: 'Currency conversion.',
  errorClass: { name: 'FxError', memberNameProperty: 'tool' },
  tools: {
    rate: {
      description: 'How many units of `to` one unit of `from` buys.',
      inputSchema: {
        type: 'object',
        properties: { from: { type: 'string', enum: ['NOK', 'EUR'] }, to: { type: 'string', enum: ['NOK', 'EUR'] } },
        required: ['from', 'to'],
      },
      outputSchema: { type: 'number' },
      run: async ({ from, to }) => {
        const rate = from === to ? 1 : RATES[/** @type {keyof typeof RATES} */ (`${from}->${to}`)]
        if (rate === undefined) throw new Error(`no rate from ${from} to ${to}`)
        return rate
      },
    },
  },
})

// The rest of the host's API: three services of 100 generated tools each. With them the groups
// hold 303 tools, past the threshold of 40, so the model discovers tools inside its programs.
const VERBS = ['create', 'get', 'list', 'update', 'delete', 'archive', 'restore', 'export', 'share', 'watch']
const NOUNS = ['ticket', 'campaign', 'shelf', 'label', 'comment', 'webhook', 'report', 'template', 'member', 'schedule']
const services = ['support', 'marketing', 'warehouse'].map((service) => {
  /** @type {Record<string, import('ptc-runtime').JsonSchemaTool>} */
  const tools = {}
  for (const verb of VERBS) {
    for (const noun of NOUNS) {
      tools[`${verb}_${noun}`] = {
        description: `${verb[0]?.toUpperCase()}${verb.slice(1)} a ${noun} in ${service}.`,
        inputSchema: { type: 'object', properties: { id: { type: 'string', description: `The ${noun} id` } } },
        run: async ({ id }) => ({ service, verb, noun, id: id ?? null }),
      }
    }
  }
  return defineToolGroup({ global: service, description: `The ${service} API.`, tools })
})

// ---------------------------------------------------------------------------------------------
// A stand-in model: replays the assistant turns of a recorded conversation. Each recorded turn
// may say what the previous tool result contained when it was recorded; if the replay sees
// something else, the recording no longer matches the runtime and the example fails loudly.

class ReplayModel {
  /** @param {{ turns: Array<{ sawInToolResult?: string[], assistant: Message }> }} recording */
  constructor(recording) {
    this.turns = recording.turns
    this.next = 0
  }

  /**
   * @param {Message[]} messages
   * @param {import('ptc-runtime').RunCodeTool} tool
   * @returns {Promise<Message>}
   */
  async respond(messages, tool) {
    if (!tool.description.includes('declare const crm')) throw new Error('the model was not shown the tool groups')
    const turn = this.turns[this.next++]
    if (!turn) throw new Error('the recorded conversation has no further turn')
    const last = messages.at(-1)?.content ?? ''
    for (const expected of turn.sawInToolResult ?? []) {
      if (!last.includes(expected)) throw new Error(`replay diverged: the tool result no longer contains ${JSON.stringify(expected)}:\n${last}`)
    }
    return turn.assistant
  }
}

// ---------------------------------------------------------------------------------------------
// The loop.

const recording = JSON.parse(readFileSync(new URL('./agent-loop.conversation.json', import.meta.url), 'utf8'))
// No `sandbox` setting: the default confinement. The model's programs get no network, none of
// this user's files, and a private scratch directory; only the tools reach the host's data.
const ctx = new Context()
await ctx.plugin(WorkerPtcRuntime, { programFormat: 'repl', retainState: true, timeoutMs: 10_000 })
const runtime = ctx.ptcRuntime

// Small budgets, so the recorded conversation shows output being cut.
const tool = createRunCodeTool({ runtime, groups: [crm, fx, ...services], maxOutputChars: 600, maxValueChars: 2000 })
const model = new ReplayModel(recording)
const conversation = {} // the state owner: one retained environment per conversation

/** @type {Message[]} */
const messages = [
  { role: 'system', content: 'You are an analyst. Use run_code to answer with data.' },
  { role: 'user', content: recording.task },
]
console.log(`=== tool offered to the model ===\n${JSON.stringify({ name: tool.name, inputSchema: tool.inputSchema }, null, 2)}`)
console.log(`--- description ---\n${tool.description}\n`)
console.log(`=== user ===\n${recording.task}\n`)
try {
  for (let step = 0; step < 10; step++) {
    const reply = await model.respond(messages, tool)
    messages.push(reply)
    if (!reply.toolCall) {
      console.log(`=== assistant ===\n${reply.content}`)
      break
    }
    const { program } = reply.toolCall.arguments
    console.log(`=== assistant calls run_code ===\n${program}\n`)
    const text = await tool.execute({ program }, { stateOwner: conversation })
    console.log(`=== tool result ===\n${text}\n`)
    messages.push({ role: 'tool', content: text })
  }
} finally {
  await runtime.release(conversation)
  await ctx.fiber.dispose()
}
