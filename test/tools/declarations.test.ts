import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type JsonSchemaTool, RUNTIME_DECLARATIONS, defineToolGroup } from 'ptc-runtime'
import { startRuntime, textOf } from '../helpers/runtime.js'
import { typecheck } from '../helpers/typecheck.js'

const run = async () => null
const tool = (inputSchema: JsonSchemaTool['inputSchema'], outputSchema?: JsonSchemaTool['outputSchema'], description?: string): JsonSchemaTool => ({
  inputSchema,
  ...(outputSchema !== undefined ? { outputSchema } : {}),
  ...(description !== undefined ? { description } : {}),
  run,
})

// One group that uses every construct the generator handles; the samples below exercise each.
const shop = defineToolGroup({
  global: 'shop',
  description: 'A small shop.',
  errorClass: { name: 'ShopError', memberNameProperty: 'tool' },
  tools: {
    order: tool(
      {
        type: 'object',
        properties: {
          sku: { type: 'string', description: 'Stock keeping unit */ with a comment terminator' },
          quantity: { type: 'integer', minimum: 1 },
          currency: { type: 'string', enum: ['NOK', 'EUR'] },
          channel: { const: 'web' },
          note: { type: ['string', 'null'] },
          gift: { type: 'boolean', nullable: true },
        },
        required: ['sku', 'quantity', 'currency'],
        additionalProperties: false,
      },
      {
        type: 'object',
        properties: { id: { type: 'string' }, total: { type: 'number' }, shipped: { type: 'string', format: 'date-time', nullable: true } },
        required: ['id', 'total', 'shipped'],
      },
      'Places an order.\nStock is checked first.',
    ),
    'price-list': tool({ type: 'object', properties: {} }, { type: 'object', additionalProperties: { type: 'number' } }),
    tree: tool(
      { type: 'object', properties: { root: { type: 'string' } }, required: ['root'] },
      {
        $ref: '#/$defs/node',
        $defs: {
          node: {
            type: 'object',
            description: 'A category and its subcategories.',
            properties: { name: { type: 'string' }, children: { type: 'array', items: { $ref: '#/$defs/node' } } },
            required: ['name', 'children'],
          },
        },
      },
    ),
    outline: tool(true, {
      type: 'object',
      properties: { title: { type: 'string' }, sections: { type: 'array', items: { $ref: '#' } } },
      required: ['title'],
    }),
    search: tool(
      {
        definitions: { range: { type: 'array', prefixItems: [{ type: 'number' }, { type: 'number' }], items: false } },
        type: 'object',
        properties: {
          query: { anyOf: [{ type: 'string' }, { type: 'array', items: { type: 'string' } }] },
          price: { $ref: '#/definitions/range' },
          filter: {
            oneOf: [
              { type: 'object', properties: { kind: { const: 'tag' }, tag: { type: 'string' } }, required: ['kind', 'tag'] },
              { type: 'object', properties: { kind: { const: 'brand' }, brand: { type: 'string' } }, required: ['kind', 'brand'] },
            ],
          },
          labels: { type: 'object', properties: { lang: { type: 'string' } }, additionalProperties: { type: 'string' } },
          'x-trace': { type: 'string' },
        },
        required: ['query'],
      },
      { allOf: [{ type: 'object', properties: { hits: { type: 'integer' } }, required: ['hits'] }, { type: 'object', properties: { tookMs: { type: 'number' } }, required: ['tookMs'] }] },
    ),
  },
})

const valid = [
  // required, optional, enum, const, nullable and closed objects
  `const o = await shop.order({ sku: 'A-1', quantity: 2, currency: 'EUR', channel: 'web', note: null, gift: null })
   const id: string = o.id
   const shipped: string | null = o.shipped
   return id + (shipped ?? 'pending') + o.total.toFixed(2)`,
  // arguments may be omitted when nothing is required; a quoted member; an index signature
  `const prices = await shop['price-list']()
   const nok: number | undefined = prices['A-1']
   return nok`,
  // recursion through $defs and through the root schema
  `const root = await shop.tree({ root: 'all' })
   const walk = (node: typeof root): number => 1 + node.children.reduce((sum, child) => sum + walk(child), 0)
   const outline = await shop.outline({ anything: 1 })
   return walk(root) + (outline.sections?.[0]?.sections?.length ?? 0) + outline.title.length`,
  // anyOf/oneOf unions narrow; a tuple from prefixItems; additionalProperties next to properties
  `const r = await shop.search({ query: ['a', 'b'], price: [10, 20], filter: { kind: 'brand', brand: 'x' }, labels: { lang: 'no', region: 'west' }, 'x-trace': 't' })
   const total: number = r.hits + r.tookMs
   return total`,
  // the error class carries the member name
  `try { await shop.search({ query: 'x' }) } catch (error) { if (error instanceof ShopError) return error.tool.toUpperCase() }`,
  // the runtime's own globals
  `const image = (await shop.outline()) as unknown as Image
   inspect(image.width + image.height)`,
]

// Each with the compiler error it must produce, so a sample cannot fail for another reason.
const invalid: Array<[string, string, number]> = [
  ['a required property is missing', `await shop.order({ sku: 'A-1', quantity: 1 })`, 2345],
  ['a value outside the enum', `await shop.order({ sku: 'A-1', quantity: 1, currency: 'USD' })`, 2322],
  ['a const that differs', `await shop.order({ sku: 'A-1', quantity: 1, currency: 'NOK', channel: 'shop' })`, 2322],
  ['a property that additionalProperties: false forbids', `await shop.order({ sku: 'A-1', quantity: 1, currency: 'NOK', coupon: 'X' })`, 2353],
  ['a wrong property type', `await shop.order({ sku: 7, quantity: 1, currency: 'NOK' })`, 2322],
  ['a nullable result used without a check', `const o = await shop.order({ sku: 'A', quantity: 1, currency: 'NOK' })\nreturn o.shipped.length`, 18047],
  ['a result property that does not exist', `const o = await shop.order({ sku: 'A', quantity: 1, currency: 'NOK' })\nreturn o.status`, 2339],
  ['a required argument omitted', `await shop.tree()`, 2554],
  ['a tool that does not exist', `await shop.refund({ id: 'x' })`, 2339],
  ['a union member that does not fit', `await shop.search({ query: 5 })`, 2322],
  ['a oneOf branch with a mixed-up property', `await shop.search({ query: 'x', filter: { kind: 'tag', brand: 'y' } })`, 2353],
  ['a tuple of the wrong length', `await shop.search({ query: 'x', price: [1, 2, 3] })`, 2322],
  ['an additional property of the wrong type', `await shop.search({ query: 'x', labels: { region: 3 } })`, 2322],
  ['a recursive result read as the wrong shape', `const root = await shop.tree({ root: 'a' })\nreturn root.children.name`, 2339],
  ['a result used before it is awaited', `const o = shop.order({ sku: 'A', quantity: 1, currency: 'NOK' })\nreturn o.id`, 2339],
]

describe('declarations from JSON schemas', () => {
  it('compile, and type-check programs that use the tools as their schemas allow', () => {
    const result = typecheck(`${RUNTIME_DECLARATIONS}\n\n${shop.declarations}`, valid)
    expect(result.declarations).toEqual([])
    expect(result.samples).toEqual(valid.map(() => []))
    // A schema that refers to itself is declared once, by name.
    expect(shop.declarations).toContain('outline(args?: unknown): Promise<shop.OutlineResult>')
  })

  it('reject programs that break the schemas', () => {
    const result = typecheck(`${RUNTIME_DECLARATIONS}\n\n${shop.declarations}`, invalid.map(([, body]) => body))
    const codes = result.samples.map((diagnostics) => diagnostics.map((line) => Number(/^TS(\d+)/.exec(line)![1])))
    expect(invalid.map(([why], index) => [why, codes[index]])).toEqual(invalid.map(([why, , code]) => [why, [code]]))
  })

  it('read like hand-written TypeScript, with JSDoc from descriptions and constraints', () => {
    const { declarations } = defineToolGroup({
      global: 'crm',
      description: 'Customer records.',
      errorClass: { name: 'CrmError', memberNameProperty: 'tool' },
      tools: {
        findCustomers: {
          description: 'Customers of one country.',
          inputSchema: {
            type: 'object',
            properties: { country: { type: 'string', description: 'ISO 3166-1 alpha-2 code', pattern: '^[A-Z]{2}$' }, limit: { type: 'integer', minimum: 1, default: 10 } },
            required: ['country'],
          },
          outputSchema: {
            type: 'array',
            items: { $ref: '#/$defs/customer' },
            $defs: { customer: { type: 'object', description: 'A customer.', properties: { id: { type: 'string' }, referredBy: { $ref: '#/$defs/customer' } }, required: ['id'] } },
          },
          run,
        },
      },
    })
    expect(declarations).toBe(`/**
 * Customer records.
 * Results arrive as JSON.stringify writes them (a Date as its ISO string, undefined fields dropped); a tool that returns nothing resolves undefined.
 */
declare const crm: {
  /** Customers of one country. */
  findCustomers(args: {
    /**
     * ISO 3166-1 alpha-2 code
     * @pattern ^[A-Z]{2}$
     */
    country: string
    /**
     * @minimum 1
     * @default 10
     */
    limit?: number
  }): Promise<crm.Customer[]>
}
declare namespace crm {
  /** A customer. */
  type Customer = {
    id: string
    referredBy?: crm.Customer
  }
}
/** Thrown by a failed \`crm\` call; \`error.tool\` names the tool. */
declare class CrmError extends Error { tool: string }`)
  })

  it('keep the named types of two groups apart', () => {
    const group = (global: string, field: string) =>
      defineToolGroup({
        global,
        tools: { get: tool(true, { $ref: '#/$defs/item', $defs: { item: { type: 'object', properties: { [field]: { type: 'string' } }, required: [field] } } }) },
      })
    const a = group('alpha', 'left')
    const b = group('beta', 'right')
    const result = typecheck(`${a.declarations}\n${b.declarations}`, [`const x: string = (await alpha.get()).left + (await beta.get()).right`, `return (await alpha.get()).right`])
    expect(result.declarations).toEqual([])
    expect(result.samples[0]).toEqual([])
    expect(result.samples[1]).not.toEqual([])
  })

  it('compile for schemas at the edges: boolean schemas, empty enums, odd names, every draft', () => {
    const edges = defineToolGroup({
      global: 'edges',
      tools: {
        nothing: tool(false, false),
        everything: tool({}, {}),
        emptyEnum: tool({ type: 'object', properties: { never: { enum: [] } } }, { type: 'object', additionalProperties: false }),
        '0 odd/name': tool({ type: 'object', properties: { 'a b': { type: 'number' }, 'class': { type: 'string' }, '': { type: 'null' } }, required: ['a b', 'missing'] }),
        draft4: tool({ type: 'object', properties: { pair: { type: 'array', items: [{ type: 'string' }, { type: 'integer' }], minItems: 1, additionalItems: { type: 'boolean' } } } }),
        patterns: tool({ type: 'object', patternProperties: { '^x-': { type: 'string' } }, properties: { id: { type: 'string' } }, required: ['id'] }),
        mixed: tool({ type: ['object', 'string', 'integer'], properties: { a: { type: 'string' } } }, { const: { nested: [1, 'two', null, { deep: true }] } }),
        remote: tool({ $ref: 'https://example.com/schemas/thing.json' }, { type: 'unsupported-type' }),
        names: tool({ $defs: { Array: { type: 'string' }, 'my-type': { type: 'number' }, '9lives': { type: 'boolean' } }, type: 'object', properties: { a: { $ref: '#/$defs/Array' }, b: { $ref: '#/$defs/my-type' }, c: { $ref: '#/$defs/9lives' } } }),
        escaped: tool({ $defs: { 'a/b': { type: 'string' }, 'c~d': { type: 'number' } }, type: 'object', properties: { x: { $ref: '#/$defs/a~1b' }, y: { $ref: '#/$defs/c~0d' } } }),
      },
    })
    const result = typecheck(`${RUNTIME_DECLARATIONS}\n${edges.declarations}`, [
      `const pair = await edges.draft4({ pair: ['a', 1, true, false] })
       await edges['0 odd/name']({ 'a b': 1, missing: 'anything', class: 'c' })
       await edges.patterns({ id: 'i', 'x-trace': 't' })
       await edges.names({ a: 'text', b: 1, c: true })
       await edges.escaped({ x: 'text', y: 2 })
       const mixed = await edges.mixed(7)
       await edges.mixed('seven')
       return [pair, mixed.nested[3].deep]`,
      `await edges.names({ a: 1 })`,
    ])
    expect(result.declarations).toEqual([])
    expect(result.samples[0]).toEqual([])
    expect(result.samples[1]).not.toEqual([])
    expect(edges.declarations).toContain('nothing(args: never): Promise<never>')
    expect(edges.declarations).toContain('type ArrayType = string')
  })

  it('refuse malformed definitions with the field and the rule', () => {
    const base = { global: 'ok', tools: {} }
    expect(() => defineToolGroup({ ...base, global: 'class' })).toThrow('binding global "class" must match')
    expect(() => defineToolGroup({ ...base, tools: { a: { inputSchema: {} } as never } })).toThrow('tool group "ok": tools["a"].run must be a function')
    expect(() => defineToolGroup({ ...base, tools: { a: { run } as never } })).toThrow('tool group "ok": tools["a"].inputSchema is required (a JSON Schema)')
    expect(() => defineToolGroup({ ...base, tools: { a: tool({ type: 'object', properties: { x: 'string' as never } }) } })).toThrow(
      'tool group "ok": tools["a"].inputSchema#/properties/x: a schema must be an object or a boolean',
    )
    expect(() => defineToolGroup({ ...base, tools: { a: tool(true, { items: { $ref: '#/$defs/missing' } }) } })).toThrow(
      'tool group "ok": tools["a"].outputSchema#/items: $ref "#/$defs/missing" does not resolve inside the schema',
    )
    expect(() => defineToolGroup({ ...base, errorClass: { name: 'Image', memberNameProperty: 'tool' } })).toThrow('binding error class "Image" is reserved by the runtime')
    expect(() => defineToolGroup({ ...base, tools: { a: { ...tool({}), needsApproval: 'yes' as never } } })).toThrow(
      'tool group "ok": tools["a"].needsApproval must be a boolean or a function of the arguments',
    )
  })

  it('tell the model which tools wait for a person, so a program can catch a refusal', () => {
    const { declarations } = defineToolGroup({
      global: 'mail',
      tools: {
        send: { description: 'Sends one e-mail.', inputSchema: {}, needsApproval: true, run },
        draft: { inputSchema: {}, needsApproval: () => false, run },
        read: { inputSchema: {}, needsApproval: false, run },
      },
    })
    expect(declarations).toContain("/**\n   * Sends one e-mail.\n   * Each call waits for a person's approval; a refused call throws with their reason.")
    expect(declarations).toContain("/** A call may wait for a person's approval; a refused call throws with their reason. */\n  draft(")
    expect(declarations).toContain('Promise<unknown>\n  read(args?: unknown)')
  })
})

describe('a tool group at run time', () => {
  let env: Awaited<ReturnType<typeof startRuntime>>
  beforeAll(async () => {
    env = await startRuntime({ timeoutMs: 10_000 })
  })
  afterAll(() => env.dispose())

  it('calls run with the program argument and the call signal, and raises the error class on failure', async () => {
    const seen: unknown[] = []
    const group = defineToolGroup({
      global: 'stock',
      errorClass: { name: 'StockError', memberNameProperty: 'tool' },
      tools: {
        count: {
          inputSchema: { type: 'object', properties: { sku: { type: 'string' } }, required: ['sku'] },
          // Synchronous on purpose: the group makes every tool async.
          run: (args, call) => {
            seen.push(args, call.signal instanceof AbortSignal)
            if (args.sku !== 'A-1') throw new Error(`unknown sku ${args.sku}`)
            return 3
          },
        },
      },
    })
    const result = await env.run(
      `console.log(await stock.count({ sku: 'A-1' }))
       try { await stock.count({ sku: 'B-2' }) } catch (error) { console.log(error instanceof StockError, error.tool, error.message) }`,
      { bindings: [group.namespace] },
    )
    expect(result.error).toBeUndefined()
    expect(textOf(result)).toBe('3\ntrue count unknown sku B-2\n')
    expect(seen).toEqual([{ sku: 'A-1' }, true, { sku: 'B-2' }, true])
  })
})
