// What a server cannot make the host keep: image files past the group's life or its budgets,
// endless tool lists, abort listeners of finished calls.
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js'
import { Server } from '@modelcontextprotocol/sdk/server/index.js'
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { mcpToolGroup } from 'ptc-runtime/mcp'
import { startRuntime } from '../helpers/runtime.js'
import { png } from './fixtures/images.mjs'

const any = { type: 'object' as const }

/** A server with image tools: `photo` (one small PNG), `many` (`n` of them), `big` (one PNG padded to `bytes`, then `text` characters of text and a resource of `resource` characters). */
async function connectImageServer() {
  const server = new Server({ name: 'camera', version: '1.0.0' }, { capabilities: { tools: {} } })
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: ['photo', 'many', 'big'].map((name) => ({ name, inputSchema: any })) }))
  const small = png(4, 3).toString('base64')
  server.setRequestHandler(CallToolRequestSchema, (request) => {
    const args = (request.params.arguments ?? {}) as { n?: number; bytes?: number; text?: number; resource?: number }
    const image = (data: string) => ({ type: 'image' as const, data, mimeType: 'image/png' })
    switch (request.params.name) {
      case 'photo':
        return { content: [image(small)] }
      case 'many':
        return { content: Array.from({ length: args.n ?? 1 }, () => image(small)) }
      default: {
        const head = png(4, 3)
        const text = args.text ? [{ type: 'text' as const, text: 'x'.repeat(args.text) }] : []
        const resource = args.resource ? [{ type: 'resource' as const, resource: { uri: 'file:///notes.txt', text: 'r'.repeat(args.resource) } }] : []
        return { content: [image(Buffer.concat([head, Buffer.alloc(args.bytes! - head.length)]).toString('base64')), ...text, ...resource] }
      }
    }
  })
  return connect(server)
}

async function connect(server: Server) {
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair()
  await server.connect(serverSide)
  const client = new Client({ name: 'ptc-runtime-test', version: '1.0.0' })
  await client.connect(clientSide)
  return { client, clientSide }
}

const newImageDirectories = (before: Set<string>) => readdirSync(tmpdir()).filter((name) => name.startsWith('ptc-mcp-images-') && !before.has(name))

describe("an MCP group's images", () => {
  let env: Awaited<ReturnType<typeof startRuntime>>
  let tight: Awaited<ReturnType<typeof startRuntime>>
  let client: Client
  let directory: string
  beforeAll(async () => {
    env = await startRuntime({ timeoutMs: 10_000 })
    tight = await startRuntime({ timeoutMs: 10_000, maxCallResultBytes: 10_000 })
    ;({ client } = await connectImageServer())
    directory = mkdtempSync(path.join(tmpdir(), 'ptc-mcp-bounds-'))
  })
  afterAll(async () => {
    await Promise.all([env.dispose(), tight.dispose(), client.close()])
    rmSync(directory, { recursive: true, force: true })
  })

  it('outlive the run and are deleted when the group is disposed, its temporary directory with them', async () => {
    const before = new Set(readdirSync(tmpdir()))
    const group = await mcpToolGroup(client, { global: 'camera' })
    const result = await env.run('for (let i = 0; i < 5; i++) inspect((await camera.photo())[0])', { bindings: [group.namespace] })
    expect(result.error).toBeUndefined()
    const files = result.output.flatMap((entry) => (entry.type === 'image' ? [entry.attachment.attachmentId] : []))
    expect(files).toHaveLength(5)
    // The agent loop reads a result's images after the run: they are still there.
    expect(files.every((file) => existsSync(file))).toBe(true)
    expect(newImageDirectories(before)).toEqual([path.basename(path.dirname(files[0]!))])
    await group.dispose()
    expect(newImageDirectories(before)).toEqual([])
    const late = await env.run('return await camera.photo().catch((error) => error.message)', { bindings: [group.namespace] })
    expect(late.value).toBe('mcpToolGroup "camera" has been disposed; make a new group to call its tools')
    expect(newImageDirectories(before)).toEqual([])
  })

  it("in a directory of the host's own, are deleted one by one, the directory and other files kept", async () => {
    const group = await mcpToolGroup(client, { global: 'camera', imageDirectory: directory })
    const result = await env.run('await camera.photo(); await camera.photo()', { bindings: [group.namespace] })
    expect(result.error).toBeUndefined()
    expect(readdirSync(directory)).toHaveLength(2)
    await group.dispose()
    expect(readdirSync(directory)).toEqual([])
    expect(existsSync(directory)).toBe(true)
  })

  it('are at most 64 in one result, refused before any is written', async () => {
    const group = await mcpToolGroup(client, { global: 'camera', imageDirectory: directory })
    const result = await env.run('return [(await camera.many({ n: 64 })).length, await camera.many({ n: 5000 }).catch((error) => error.message)]', {
      bindings: [group.namespace],
    })
    expect(result.value).toEqual([64, 'the tool returned 5000 images in one result; a result may carry at most 64'])
    expect(readdirSync(directory)).toHaveLength(64)
    await group.dispose()
  })

  it("count their decoded bytes against the tool's maxResultBytes, refused before decoding", async () => {
    const group = await mcpToolGroup(client, { global: 'camera', imageDirectory: directory, maxResultBytes: 10_000 })
    const result = await env.run('return [(await camera.big({ bytes: 9000 }))[0].bytes, await camera.big({ bytes: 2_000_000 }).catch((error) => error.message)]', {
      bindings: [group.namespace],
    })
    expect(result.value).toEqual([9000, "the tool returned 2000000 bytes of images, over the call's budget of 10000 (the group's maxResultBytes)"])
    expect(readdirSync(directory)).toHaveLength(1)
    await group.dispose()
  })

  it('count with the text beside them against one budget', async () => {
    const group = await mcpToolGroup(client, { global: 'camera', imageDirectory: directory, maxResultBytes: 10_000 })
    const result = await env.run('return [(await camera.big({ bytes: 6000, text: 3000 }))[1].length, await camera.big({ bytes: 6000, text: 6000 }).catch((error) => error.message)]', {
      bindings: [group.namespace],
    })
    expect(result.value).toEqual([3000, "the tool returned 6000 bytes of images and 6000 bytes of text, over the call's budget of 10000 (the group's maxResultBytes)"])
    // A resource's text is text the program receives too.
    const resource = await env.run('return await camera.big({ bytes: 6000, resource: 6000 }).catch((error) => error.message)', { bindings: [group.namespace] })
    expect(resource.value).toBe("the tool returned 6000 bytes of images and 6000 bytes of text, over the call's budget of 10000 (the group's maxResultBytes)")
    expect(readdirSync(directory)).toHaveLength(1)
    await group.dispose()
  })

  it("count against the runtime's maxCallResultBytes when the group sets no maxResultBytes", async () => {
    const group = await mcpToolGroup(client, { global: 'camera', imageDirectory: directory })
    const result = await tight.run('return await camera.big({ bytes: 20_000 }).catch((error) => error.message)', { bindings: [group.namespace] })
    expect(result.value).toBe("the tool returned 20000 bytes of images, over the call's budget of 10000 (maxCallResultBytes in the runtime's configuration)")
    expect(readdirSync(directory)).toEqual([])
    await group.dispose()
  })

  it('take at most maxImageBytes on disk: past it the oldest are deleted', async () => {
    const group = await mcpToolGroup(client, { global: 'camera', imageDirectory: directory, maxImageBytes: 25_000 })
    const result = await env.run('const a = []; for (let i = 0; i < 4; i++) a.push((await camera.big({ bytes: 10_000 }))[0].path); return a', { bindings: [group.namespace] })
    const files = result.value as string[]
    expect(files.map((file) => existsSync(file))).toEqual([false, false, true, true])
    const over = await env.run('return await camera.big({ bytes: 30_000 }).catch((error) => error.message)', { bindings: [group.namespace] })
    expect(over.value).toBe("the tool returned 30000 bytes of images, over the group's maxImageBytes of 25000")
    await group.dispose()
    expect(readdirSync(directory)).toEqual([])
    await expect(mcpToolGroup(client, { global: 'camera', maxImageBytes: 0 })).rejects.toThrow('mcpToolGroup: maxImageBytes must be a positive integer (bytes), got 0')
  })
})

describe("an MCP group's calls", () => {
  it("leave no listener on the run's signal: the run's end cancels none of the finished calls", async () => {
    const env = await startRuntime({ timeoutMs: 10_000 })
    const { client, clientSide } = await connectImageServer()
    let cancellations = 0
    const send = clientSide.send.bind(clientSide)
    clientSide.send = (message, options) => {
      if ('method' in message && message.method === 'notifications/cancelled') cancellations++
      return send(message, options)
    }
    const warnings: string[] = []
    const warn = (warning: Error) => warnings.push(warning.name)
    process.on('warning', warn)
    try {
      const group = await mcpToolGroup(client, { global: 'camera' })
      const result = await env.run('for (let i = 0; i < 30; i++) await camera.photo()', { bindings: [group.namespace] })
      expect(result.error).toBeUndefined()
      await new Promise((resolve) => setTimeout(resolve, 100))
      expect(cancellations).toBe(0)
      expect(warnings).not.toContain('MaxListenersExceededWarning')
      await group.dispose()
    } finally {
      process.off('warning', warn)
      await Promise.all([env.dispose(), client.close()])
    }
  })
})

describe('listing an MCP server', () => {
  /** A server whose every page of tools/list brings `perPage` tools and a fresh cursor. */
  async function endless(perPage: number, schema: object = any) {
    const server = new Server({ name: 'endless', version: '1.0.0' }, { capabilities: { tools: {} } })
    let pages = 0
    server.setRequestHandler(ListToolsRequestSchema, () => {
      pages++
      return { tools: Array.from({ length: perPage }, (_, i) => ({ name: `t${pages}_${i}`, inputSchema: schema })), nextCursor: `c${pages}` }
    })
    const { client } = await connect(server)
    return { client, pages: () => pages }
  }

  it('lists tools whose optional fields an in-memory server leaves undefined', async () => {
    const server = new Server({ name: 'sparse', version: '1.0.0' }, { capabilities: { tools: {} } })
    server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: [{ name: 'echo', description: undefined, annotations: undefined, inputSchema: any }] }))
    const { client } = await connect(server)
    const group = await mcpToolGroup(client, { global: 'sparse' })
    expect(Object.keys(group.namespace.functions)).toEqual(['echo'])
    await group.dispose()
    await client.close()
  })

  it('refuses a server whose pages never end, naming it and the bound', async () => {
    const server = await endless(0)
    await expect(mcpToolGroup(server.client, { global: 'evil' })).rejects.toThrow('mcpToolGroup "evil": the server "endless" sent more than 100 pages of tools/list, the most a group follows')
    expect(server.pages()).toBe(100)
    await server.client.close()
  })

  it('refuses a server that lists more than 1 000 tools', async () => {
    const server = await endless(400)
    await expect(mcpToolGroup(server.client, { global: 'evil' })).rejects.toThrow('mcpToolGroup "evil": the server "endless" listed more than 1000 tools, the most a group takes')
    expect(server.pages()).toBe(3)
    await server.client.close()
  })

  it('refuses tool definitions over 4 MiB of JSON in all', async () => {
    const server = await endless(1, { type: 'object', description: 'x'.repeat(1024 * 1024) })
    await expect(mcpToolGroup(server.client, { global: 'evil' })).rejects.toThrow(
      'mcpToolGroup "evil": the server "endless" listed tools of more than 4194304 bytes of JSON (names, descriptions and schemas), the most a group takes',
    )
    expect(server.pages()).toBe(4)
    await server.client.close()
  })
})
