// @ts-check
// `npm run build && node examples/agent-loop.mjs`: how an agent loop offers ptc-runtime to a
// model as one `run_code` tool.
//
// 1. Host tools are described by JSON schemas, as a model API wants them.
// 2. The loop derives two things from them: binding namespaces for the runtime, and TypeScript
//    declarations of the same tools for the model's prompt.
// 3. The `run_code` tool's description carries the runtime's `executionInstructions`.
// 4. Each program the model writes runs with the conversation as its state owner, so a later
//    program sees what an earlier one declared; each `PtcRunResult` becomes the tool result
//    text (output, value, failure), truncated to a budget.
//
// The model here is a stand-in that replays a recorded conversation
// (`agent-loop.conversation.json`), so the example runs offline and deterministically. Swap
// `ReplayModel` for a client of a real model API; nothing else changes. Plain JavaScript with
// JSDoc types, so Node runs it as is.
import { readFileSync } from 'node:fs'
import { Context } from 'cordis'
import { WorkerPtcRuntime } from 'ptc-runtime'

/** @typedef {import('ptc-runtime').PtcBindingNamespace} PtcBindingNamespace */
/** @typedef {import('ptc-runtime').PtcRunResult} PtcRunResult */
/** @typedef {import('ptc-runtime').PtcJsonValue} PtcJsonValue */
/**
 * A JSON schema, the subset tool definitions use.
 * @typedef {{ type?: string | string[], description?: string, enum?: PtcJsonValue[],
 *   properties?: Record<string, JsonSchema>, required?: string[], items?: JsonSchema }} JsonSchema
 */
/**
 * One host tool: what the model is told, and the function that does the work.
 * @typedef {{ description: string, parameters: JsonSchema, returns: JsonSchema,
 *   run: (args: any) => Promise<PtcJsonValue> }} Tool
 */
/**
 * A group of tools the program sees as one global object.
 * @typedef {{ description: string, errorClass: string, functions: Record<string, Tool> }} ToolGroup
 */
/**
 * One message of the conversation, in a shape close to what model APIs use.
 * @typedef {{ role: 'system' | 'user' | 'assistant' | 'tool', content: string,
 *   toolCall?: { name: string, arguments: { code: string } } }} Message
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

/** @type {Record<string, ToolGroup>} */
const toolGroups = {
  crm: {
    description: 'Customer relationship records.',
    errorClass: 'CrmError',
    functions: {
      findCustomers: {
        description: 'Customers of one country.',
        parameters: {
          type: 'object',
          properties: { country: { type: 'string', description: 'ISO 3166-1 alpha-2 code, e.g. "NO"' } },
          required: ['country'],
        },
        returns: {
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
        parameters: { type: 'object', properties: { customerId: { type: 'string' } }, required: ['customerId'] },
        returns: {
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
  },
  fx: {
    description: 'Currency conversion.',
    errorClass: 'FxError',
    functions: {
      rate: {
        description: 'How many units of `to` one unit of `from` buys.',
        parameters: {
          type: 'object',
          properties: { from: { type: 'string', enum: ['NOK', 'EUR'] }, to: { type: 'string', enum: ['NOK', 'EUR'] } },
          required: ['from', 'to'],
        },
        returns: { type: 'number' },
        run: async ({ from, to }) => {
          const rate = from === to ? 1 : RATES[/** @type {keyof typeof RATES} */ (`${from}->${to}`)]
          if (rate === undefined) throw new Error(`no rate from ${from} to ${to}`)
          return rate
        },
      },
    },
  },
}

// ---------------------------------------------------------------------------------------------
// From tool definitions to what the runtime and the model need.

/**
 * The runtime's view of the tools: one namespace per group, with a typed error class.
 * @param {Record<string, ToolGroup>} groups
 * @returns {PtcBindingNamespace[]}
 */
function bindingsFrom(groups) {
  return Object.entries(groups).map(([global, group]) => ({
    global,
    functions: Object.fromEntries(Object.entries(group.functions).map(([name, tool]) => [name, (args) => tool.run(args)])),
    errorClass: { name: group.errorClass, memberNameProperty: 'tool' },
  }))
}

/**
 * The model's view of the same tools: TypeScript declarations generated from their schemas.
 * @param {Record<string, ToolGroup>} groups
 */
function declarationsFrom(groups) {
  const blocks = Object.entries(groups).map(([global, group]) => {
    const members = Object.entries(group.functions).map(
      ([name, tool]) => `${docComment(tool.description, '  ')}  ${name}(args: ${tsType(tool.parameters, '  ')}): Promise<${tsType(tool.returns, '  ')}>`,
    )
    return [
      `${docComment(group.description, '')}declare const ${global}: {`,
      ...members,
      '}',
      `/** Thrown by a failed \`${global}\` call; \`error.tool\` names the function. */`,
      `declare class ${group.errorClass} extends Error { tool: string }`,
    ].join('\n')
  })
  return blocks.join('\n\n')
}

/**
 * @param {JsonSchema} schema
 * @param {string} indent
 * @returns {string}
 */
function tsType(schema, indent) {
  if (schema.enum) return schema.enum.map((value) => JSON.stringify(value)).join(' | ')
  if (Array.isArray(schema.type)) return schema.type.map((type) => tsType({ ...schema, type }, indent)).join(' | ')
  switch (schema.type) {
    case 'string':
      return 'string'
    case 'number':
    case 'integer':
      return 'number'
    case 'boolean':
      return 'boolean'
    case 'null':
      return 'null'
    case 'array':
      return `Array<${schema.items ? tsType(schema.items, indent) : 'unknown'}>`
    case 'object': {
      const required = new Set(schema.required ?? [])
      const inner = `${indent}  `
      const fields = Object.entries(schema.properties ?? {}).map(([key, value]) => {
        const name = /^[A-Za-z_$][\w$]*$/.test(key) ? key : JSON.stringify(key)
        return `${docComment(value.description, inner)}${inner}${name}${required.has(key) ? '' : '?'}: ${tsType(value, inner)}`
      })
      return fields.length === 0 ? 'Record<string, unknown>' : `{\n${fields.join('\n')}\n${indent}}`
    }
    default:
      return 'unknown'
  }
}

/**
 * @param {string | undefined} text
 * @param {string} indent
 */
function docComment(text, indent) {
  return text ? `${indent}/** ${text} */\n` : ''
}

/**
 * The one tool the model calls. Its description is the runtime's own instructions plus the
 * declarations, so the model writes programs in the right format against the right globals.
 * @param {import('ptc-runtime').PtcRuntime} runtime
 * @param {string} declarations
 */
function runCodeTool(runtime, declarations) {
  return {
    name: 'run_code',
    description: [
      'Run a JavaScript program that calls the tools below, and see what it printed and returned.',
      runtime.executionInstructions,
      `Tools available as globals:\n\`\`\`ts\n${declarations}\n\`\`\``,
    ].join('\n\n'),
    input_schema: {
      type: 'object',
      properties: { code: { type: 'string', description: `The program (${runtime.programFormat} format).` } },
      required: ['code'],
    },
  }
}

/**
 * Turns a run's result into the text the model reads next: its output, then its value or its
 * failure. Long output keeps its beginning and its end, because both tend to matter (headers
 * and totals); the value is cut at the end.
 * @param {PtcRunResult} result
 * @param {{ maxOutputChars: number, maxValueChars: number }} budget
 */
function toolResultText(result, budget) {
  const sections = []
  let output = ''
  for (const entry of result.output) {
    output +=
      entry.type === 'text'
        ? entry.text
        : `[image ${entry.attachment.attachmentId}: ${entry.attachment.width}x${entry.attachment.height} ${entry.attachment.mediaType}]\n`
  }
  if (output !== '') sections.push(`Output:\n${keepEnds(output, budget.maxOutputChars)}`)
  if (result.error) sections.push(`Error (${result.error.kind}): ${result.error.message}`)
  else if ('value' in result) {
    const json = JSON.stringify(result.value, null, 2)
    const cut = json.length > budget.maxValueChars
    sections.push(`Result:\n${cut ? `${json.slice(0, budget.maxValueChars)}\n[… result cut at ${budget.maxValueChars} of ${json.length} characters; return less or summarise …]` : json}`)
  }
  return sections.length === 0 ? 'The program finished without output or result.' : sections.join('\n')
}

/**
 * Keeps whole lines from the start and the end of `text`, within `max` characters.
 * @param {string} text
 * @param {number} max
 */
function keepEnds(text, max) {
  const body = text.endsWith('\n') ? text.slice(0, -1) : text
  if (body.length <= max) return body
  const headEnd = body.lastIndexOf('\n', Math.ceil(max * 0.6))
  const tailStart = body.indexOf('\n', body.length - Math.floor(max * 0.4))
  const head = headEnd > 0 ? body.slice(0, headEnd) : body.slice(0, Math.ceil(max * 0.6))
  const tail = tailStart >= 0 ? body.slice(tailStart + 1) : body.slice(body.length - Math.floor(max * 0.4))
  const omitted = body.length - head.length - tail.length
  return `${head}\n[… ${omitted} characters of output omitted …]\n${tail}`
}

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
   * @param {ReturnType<typeof runCodeTool>} tool
   * @returns {Promise<Message>}
   */
  async respond(messages, tool) {
    if (!tool.description.includes('declare const crm')) throw new Error('the model was not shown the tool declarations')
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
const ctx = new Context()
await ctx.plugin(WorkerPtcRuntime, { programFormat: 'repl', retainState: true, timeoutMs: 10_000 })
const runtime = ctx.ptcRuntime

const bindings = bindingsFrom(toolGroups)
const tool = runCodeTool(runtime, declarationsFrom(toolGroups))
const model = new ReplayModel(recording)
const conversation = {} // the state owner: one retained environment per conversation
const budget = { maxOutputChars: 600, maxValueChars: 2000 }

/** @type {Message[]} */
const messages = [
  { role: 'system', content: 'You are an analyst. Use run_code to answer with data.' },
  { role: 'user', content: recording.task },
]
console.log(`=== tool offered to the model ===\n${JSON.stringify({ name: tool.name, input_schema: tool.input_schema }, null, 2)}`)
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
    const { code } = reply.toolCall.arguments
    console.log(`=== assistant calls run_code ===\n${code}\n`)
    const result = await runtime.run(runtime.resolve({ program: code, bindings, stateOwner: conversation }))
    const text = toolResultText(result, budget)
    console.log(`=== tool result ===\n${text}\n`)
    messages.push({ role: 'tool', content: text })
  }
} finally {
  await runtime.release(conversation)
  await ctx.fiber.dispose()
}
