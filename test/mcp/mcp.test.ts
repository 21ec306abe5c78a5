import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js'
import { Server } from '@modelcontextprotocol/sdk/server/index.js'
import { ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { RUNTIME_DECLARATIONS, type ToolGroup, createRunCodeTool } from 'ptc-runtime'
import { type McpClient, mcpToolGroup } from 'ptc-runtime/mcp'
import { startRuntime, textOf } from '../helpers/runtime.js'
import { typecheck } from '../helpers/typecheck.js'
import { createCatalogueServer } from './fixtures/catalogue-server.mjs'
import { gif, jpeg, png, webp } from './fixtures/images.mjs'

const serverScript = fileURLToPath(new URL('./fixtures/catalogue-server.mjs', import.meta.url))

async function connectInMemory(server: Server) {
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair()
  await server.connect(serverSide)
  const client = new Client({ name: 'ptc-runtime-test', version: '1.0.0' })
  await client.connect(clientSide)
  return client
}

describe('an MCP server as a tool group', () => {
  let env: Awaited<ReturnType<typeof startRuntime>>
  let imageDirectory: string
  beforeAll(async () => {
    env = await startRuntime({ timeoutMs: 10_000 })
    imageDirectory = mkdtempSync(path.join(tmpdir(), 'ptc-mcp-test-'))
  })
  afterAll(async () => {
    await env.dispose()
    rmSync(imageDirectory, { recursive: true, force: true })
  })

  describe('over an in-memory transport', () => {
    let client: Client
    let catalogue: ReturnType<typeof createCatalogueServer>
    let group: ToolGroup
    beforeAll(async () => {
      catalogue = createCatalogueServer()
      client = await connectInMemory(catalogue.server)
      group = await mcpToolGroup(client, { global: 'catalogue', imageDirectory })
    })
    afterAll(() => client.close())

    it('makes every tool of every page a member, with declarations that compile', () => {
      expect(catalogue.seen.listPages).toBe(4)
      expect(Object.keys(group.namespace.functions)).toEqual(['lookup', 'describe', 'photo', 'restock', 'category-tree', 'sketch', 'wait', 'stats'])
      expect(group.namespace.errorClass).toEqual({ name: 'CatalogueError', memberNameProperty: 'tool' })
      expect(group.declarations).toContain('/**\n * The product catalogue of a small shop.\n * Results arrive as JSON.stringify writes them (a Date as its ISO string, undefined fields dropped); a tool that returns nothing resolves undefined.\n */\ndeclare const catalogue: {')
      expect(group.declarations).toContain('  describe(args: {\n    /** Product code */\n    sku: string\n  }): Promise<string | Array<string | Image>>')
      const result = typecheck(`${RUNTIME_DECLARATIONS}\n${group.declarations}`, [
        `const mug = await catalogue.lookup({ sku: 'MUG-01' })
         const tree = await catalogue['category-tree']()
         const names = tree.children.flatMap((child) => [child.name, ...child.children.map((c) => c.name)])
         const photo = await catalogue.photo({ sku: 'MUG-01', format: 'png' })
         if (typeof photo !== 'string') for (const part of photo) if (typeof part !== 'string') inspect(part.width)
         try { await catalogue.restock({ sku: 'MUG-01', quantity: 1 }) } catch (error) { if (error instanceof CatalogueError) console.log(error.tool) }
         return [mug.price.toFixed(2), ...mug.tags, ...names]`,
        `await catalogue.photo({ sku: 'MUG-01', format: 'bmp' })`,
      ])
      expect(result.declarations).toEqual([])
      expect(result.samples[0]).toEqual([])
      expect(result.samples[1]).toEqual([expect.stringMatching(/^TS2322: Type '"bmp"' is not assignable to type '"png" \| "gif" \| "jpeg" \| "webp"'/)])
    })

    it('gives structuredContent as the value and text content as one string', async () => {
      const result = await env.run(
        `const mug = await catalogue.lookup({ sku: 'MUG-01' })
         const tree = await catalogue['category-tree']()
         return { mug, tree: tree.children.map((c) => c.name), text: await catalogue.describe({ sku: 'LAMP-3' }) }`,
        { bindings: [group.namespace] },
      )
      expect(result.error).toBeUndefined()
      expect(result.value).toEqual({
        mug: { sku: 'MUG-01', name: 'Enamel mug', price: 12.5, tags: ['kitchen'] },
        tree: ['kitchen', 'office'],
        text: 'Desk lamp.\nCosts 49 EUR.',
      })
    })

    it('gives image content as images the program can inspect, written to the image directory', async () => {
      const result = await env.run(
        `for (const format of ['png', 'gif', 'jpeg', 'webp']) {
           const [caption, image] = await catalogue.photo({ sku: 'LAMP-3', format })
           console.log(caption, image instanceof Image, image.mediaType, image.width + 'x' + image.height, image.path === image.attachmentId)
           inspect(image)
         }`,
        { bindings: [group.namespace] },
      )
      expect(result.error).toBeUndefined()
      expect(textOf(result)).toBe(
        ['image/png 3x2', 'image/gif 5x3', 'image/jpeg 16x8', 'image/webp 7x3'].map((kind) => `Desk lamp, front true ${kind} true\n`).join(''),
      )
      const images = result.output.flatMap((entry) => (entry.type === 'image' ? [entry.attachment] : []))
      expect(images.map(({ mediaType, width, height }) => ({ mediaType, width, height }))).toEqual([
        { mediaType: 'image/png', width: 3, height: 2 },
        { mediaType: 'image/gif', width: 5, height: 3 },
        { mediaType: 'image/jpeg', width: 16, height: 8 },
        { mediaType: 'image/webp', width: 7, height: 3 },
      ])
      const sent = [png(3, 2), gif(5, 3), jpeg(16, 8), webp(7, 3)]
      for (const [index, image] of images.entries()) {
        expect(path.dirname(image.attachmentId)).toBe(imageDirectory)
        expect(readFileSync(image.attachmentId)).toEqual(sent[index])
      }
      expect(images.map((image) => image.bytes)).toEqual(sent.map((bytes) => bytes.length))
    })

    it('rejects an image type programs cannot receive, naming it', async () => {
      const result = await env.run('await catalogue.sketch()', { bindings: [group.namespace] })
      expect(result.error).toEqual({
        kind: 'exception',
        message: 'CatalogueError: the tool returned an image of type image/svg+xml; programs receive PNG, JPEG, WebP and GIF only\n    at program:1:1',
      })
    })

    it('turns isError into a rejection with the error class and the server message', async () => {
      const result = await env.run(
        `try { await catalogue.restock({ sku: 'MUG-01', quantity: 5 }) } catch (error) { console.log(error instanceof CatalogueError, error.tool, error.message) }
         await catalogue.lookup({ sku: 'NOPE' })`,
        { bindings: [group.namespace] },
      )
      expect(textOf(result)).toBe('true restock MUG-01 is discontinued\n')
      expect(result.error).toEqual({ kind: 'exception', message: 'CatalogueError: no product NOPE\n    at program:2:10' })
    })

    it('refuses an argument that does not fit the tool schema before the server is asked', async () => {
      const before = catalogue.seen.calls
      const result = await env.run(
        `return await catalogue.restock({ sku: 'MUG-01', quantity: 0 }).catch((error) => [error instanceof CatalogueError, error.tool, error.message])`,
        { bindings: [group.namespace] },
      )
      expect(result.value).toEqual([true, 'restock', 'catalogue.restock: invalid arguments: $.quantity must be >= 1'])
      expect(result.calls).toMatchObject([{ tool: 'catalogue.restock', outcome: 'refused' }])
      expect(catalogue.seen.calls).toBe(before)
    })

    it('a call past the group timeoutMs rejects naming the tool and cancels the server-side call', async () => {
      const timed = await mcpToolGroup(client, { global: 'catalogue', imageDirectory, timeoutMs: 200 })
      const cancelled = catalogue.seen.cancelled
      const result = await env.run('return await catalogue.wait().catch((error) => error.message)', { bindings: [timed.namespace] })
      expect(result.value).toBe('catalogue.wait did not finish within its time budget of 200 ms (timeoutMs)')
      expect(result.calls).toMatchObject([{ tool: 'catalogue.wait', outcome: 'timeout' }])
      for (let tries = 0; catalogue.seen.cancelled === cancelled && tries < 500; tries++) await new Promise((resolve) => setTimeout(resolve, 20))
      expect(catalogue.seen.cancelled).toBe(cancelled + 1)
    })

    it("takes the group's maxSchemaCheckMsPerRun, a positive integer, as the run's budget of schema checking", async () => {
      const tight = await mcpToolGroup(client, { global: 'catalogue', imageDirectory, maxSchemaCheckMsPerRun: 40 })
      const before = catalogue.seen.calls
      // A run that has spent 50 ms of checks already; an argument of unknown size is checked as a large one.
      const call = { signal: new AbortController().signal, hold: async () => undefined, argumentBytes: Number.POSITIVE_INFINITY, ledger: { schemaCheckMs: 50 } }
      await expect(tight.namespace.functions.restock!({ sku: 'MUG-01', quantity: 1 }, call)).rejects.toThrow(
        "catalogue.restock: checking this run's arguments against input schemas has taken 50 ms of the host's thread, reaching its budget of 40 ms (maxSchemaCheckMsPerRun)",
      )
      expect(catalogue.seen.calls).toBe(before)
      await expect(mcpToolGroup(client, { global: 'catalogue', maxSchemaCheckMsPerRun: 0 })).rejects.toThrow('tool group "catalogue": maxSchemaCheckMsPerRun must be a positive integer (ms), got 0')
    })

    it("is searchable through catalog from the server's tool descriptions", async () => {
      const tool = createRunCodeTool({ runtime: env.runtime, groups: [group], discovery: 'always' })
      expect(tool.description).toContain('0 of 8 tools shown.')
      const result = await env.run(`const [hit] = await catalog.search('order more of a product', { limit: 1 }); return [hit.name, hit.description]`, { bindings: tool.bindings })
      expect(result.value).toEqual(['catalogue.restock', 'Orders more of a product.'])
    })

    it('cancels the server-side call when the run ends first', async () => {
      const cancelled = catalogue.seen.cancelled
      const result = await env.run('await catalogue.wait()', { bindings: [group.namespace], timeoutMs: 300 })
      expect(result.error?.kind).toBe('timeout')
      // The cancellation is a notification: wait (generously, for a loaded machine) for the server to have handled it.
      for (let tries = 0; catalogue.seen.cancelled === cancelled && tries < 500; tries++) await new Promise((resolve) => setTimeout(resolve, 20))
      expect(catalogue.seen.cancelled).toBe(cancelled + 1)
    })
  })

  it('works over stdio with a server in a subprocess', async () => {
    const transport = new StdioClientTransport({ command: process.execPath, args: [serverScript], stderr: 'pipe' })
    const client = new Client({ name: 'ptc-runtime-test', version: '1.0.0' })
    await client.connect(transport)
    try {
      const group = await mcpToolGroup(client, { global: 'shop', description: 'The shop.', errorClass: { name: 'ShopFailure', memberNameProperty: 'operation' } })
      expect(group.declarations).toContain('/**\n * The shop.\n * Results arrive as JSON.stringify writes them (a Date as its ISO string, undefined fields dropped); a tool that returns nothing resolves undefined.\n */\ndeclare const shop: {')
      expect(group.declarations).toContain('declare class ShopFailure extends Error { operation: string }')
      const result = await env.run(
        `const lamp = await shop.lookup({ sku: 'LAMP-3' })
         const [, image] = await shop.photo({ sku: 'LAMP-3', format: 'png' })
         const failure = await shop.restock({ sku: 'LAMP-3', quantity: 1 }).catch((error) => error)
         return [lamp.name, image.width, image.height, failure instanceof ShopFailure, failure.operation, failure.message, (await shop.stats()).listPages]`,
        { bindings: [group.namespace] },
      )
      expect(result).toMatchObject({ output: [], value: ['Desk lamp', 3, 2, true, 'restock', 'LAMP-3 is discontinued', 4], sandbox: expect.anything() })
      expect(result.calls.map((call) => `${call.tool} ${call.outcome}`)).toEqual(['shop.lookup ok', 'shop.photo ok', 'shop.restock error', 'shop.stats ok'])
      // Without an image directory, images go to a fresh temporary one.
      const [, image] = (await group.namespace.functions.photo!({ sku: 'MUG-01', format: 'gif' }, { signal: new AbortController().signal, hold: () => Promise.reject(new Error('not held here')) })) as [string, { path: string }]
      expect(path.basename(path.dirname(image.path))).toMatch(/^ptc-mcp-images-/)
      expect(readdirSync(path.dirname(image.path))).toHaveLength(2)
      rmSync(path.dirname(image.path), { recursive: true, force: true })
    } finally {
      await client.close()
    }
  })

  it('refuses a server whose tool list pages never end', async () => {
    const server = new Server({ name: 'looping', version: '1.0.0' }, { capabilities: { tools: {} } })
    server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: [{ name: 'again', inputSchema: { type: 'object' as const } }], nextCursor: 'same' }))
    const client = await connectInMemory(server)
    try {
      await expect(mcpToolGroup(client, { global: 'looping' })).rejects.toThrow('mcpToolGroup "looping": the server "looping" repeated the tools/list cursor "same"')
    } finally {
      await client.close()
    }
  })

  it('refuses to mount a server as fetch before asking it for its tools', async () => {
    let listed = false
    const client = {
      listTools: async () => {
        listed = true
        return { tools: [] }
      },
      callTool: async () => ({ content: [] }),
      getInstructions: () => undefined,
    } as unknown as McpClient
    await expect(mcpToolGroup(client, { global: 'fetch' })).rejects.toThrow('binding global "fetch" would replace the built-in global fetch')
    expect(listed).toBe(false)
  })
})

describe.each([
  ['the thread tier', { isolation: 'thread' as const }],
  ['the default confined tier', {}],
])('an MCP group over a client that revives values, on %s', (_tier, config) => {
  let env: Awaited<ReturnType<typeof startRuntime>>
  beforeAll(async () => {
    env = await startRuntime({ ...config, timeoutMs: 10_000 })
  })
  afterAll(() => env.dispose())

  // A client of the developer's own (a cache, a proxy that revives dates) answers as JavaScript does.
  const client: McpClient = {
    getInstructions: () => undefined,
    listTools: async () => ({ tools: [{ name: 'event', inputSchema: { type: 'object' } }] }),
    callTool: async () => ({ content: [], structuredContent: { at: new Date(0), note: undefined, tags: ['a', undefined] } }),
  } as unknown as McpClient

  it('converts what the client resolves as JSON.stringify would', async () => {
    const group = await mcpToolGroup(client, { global: 'calendar' })
    const result = await env.run('return await calendar.event()', { bindings: [group.namespace] })
    expect(result.error).toBeUndefined()
    expect(result.value).toEqual({ at: '1970-01-01T00:00:00.000Z', tags: ['a', null] })
  })
})
