/**
 * `ptc-runtime/mcp`: the tools of a connected MCP client as one binding namespace, with the
 * declarations the model reads. Only types come from `@modelcontextprotocol/sdk`; the client
 * the caller connected does all the talking.
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { validateBindings } from '../seam/names.js'
import type { PtcBindingErrorClass } from '../seam/types.js'
import { type JsonSchemaTool, type ToolGroup, buildToolGroup } from '../tools/group.js'
import { pascalCase } from '../tools/schema-types.js'
import { CONTENT_RESULT_TYPE, ImageStore, type McpContent, contentValue, errorMessage } from './content.js'

/** The client methods this module calls; an SDK `Client` has them all. */
export type McpClient = Pick<Client, 'listTools' | 'callTool' | 'getInstructions'>

/** How the server's tools appear to programs. */
export interface McpToolGroupOptions {
  /** Program-visible global name of the namespace. */
  global: string
  /** What the group is, for the model; default: the server's `instructions`, if it sent any. */
  description?: string
  /**
   * The class failed calls reject with inside the program; default `<Global>Error` (from the
   * global in PascalCase) with the failing tool's name in `error.tool`.
   */
  errorClass?: PtcBindingErrorClass
  /**
   * Absolute directory where image content is written, one file per image, its path also the
   * attachment id; default: a fresh temporary directory, created at the first image. The host
   * owns the files: it shows them to the model and deletes them when the conversation ends.
   */
  imageDirectory?: string
  /** Time budget of each call, in ms; past it the call rejects in the program, naming the tool. */
  timeoutMs?: number
  /** JSON bytes each call may resolve; a larger result rejects in the program instead. */
  maxResultBytes?: number
  /** JSON bytes each call's argument may hold; a larger call is refused in the program instead. */
  maxArgumentBytes?: number
  /** The host's time one run may spend checking the server's tools' arguments (see `ToolGroupDefinition.maxSchemaCheckMsPerRun`). */
  maxSchemaCheckMsPerRun?: number
}

/**
 * Lists every tool of `client` (following `nextCursor` across pages) and returns them as one
 * tool group: each tool is a member whose call maps to `callTool`. A result's
 * `structuredContent` becomes the value; otherwise its content does (text as a string, images
 * as `PtcImage`s, see `CONTENT_RESULT_TYPE`). An `isError` result rejects with the server's
 * message, as an instance of the group's error class, and so does an argument that does not fit
 * the tool's `inputSchema` (checked here, before the server is asked). Tools listed later are
 * not picked up: call again to refresh.
 */
export async function mcpToolGroup(client: McpClient, options: McpToolGroupOptions): Promise<ToolGroup> {
  const { global } = options
  const errorClass = options.errorClass ?? { name: `${pascalCase(String(global))}Error`, memberNameProperty: 'tool' }
  // Refuse a bad name before talking to the server.
  validateBindings([{ global, functions: {}, errorClass }])
  const images = new ImageStore(options.imageDirectory)
  const description = options.description ?? client.getInstructions()

  const tools: Record<string, JsonSchemaTool> = {}
  for (const tool of await listAllTools(client)) {
    const name = tool.name
    tools[name] = {
      ...(tool.description !== undefined ? { description: tool.description } : {}),
      inputSchema: tool.inputSchema,
      ...(tool.outputSchema !== undefined ? { outputSchema: tool.outputSchema } : {}),
      ...(options.timeoutMs !== undefined ? { timeoutMs: options.timeoutMs } : {}),
      ...(options.maxResultBytes !== undefined ? { maxResultBytes: options.maxResultBytes } : {}),
      ...(options.maxArgumentBytes !== undefined ? { maxArgumentBytes: options.maxArgumentBytes } : {}),
      async run(args, { signal }) {
        const result = await client.callTool({ name, arguments: args ?? {} }, undefined, { signal })
        // Servers before protocol 2024-11-05 answer with `toolResult`.
        if ('toolResult' in result) return result.toolResult as never
        const content = result.content as McpContent[] | undefined
        if (result.isError) throw new Error(errorMessage(content, name))
        if (result.structuredContent !== undefined) return result.structuredContent as never
        return contentValue(content ?? [], images)
      },
    }
  }
  const { maxSchemaCheckMsPerRun } = options
  return buildToolGroup(
    { global, errorClass, tools, ...(description ? { description } : {}), ...(maxSchemaCheckMsPerRun !== undefined ? { maxSchemaCheckMsPerRun } : {}) },
    () => CONTENT_RESULT_TYPE,
  )
}

/** Every page of `tools/list`. A server that repeats a cursor would loop forever: refuse it. */
async function listAllTools(client: McpClient) {
  const tools = []
  const seen = new Set<string>()
  let cursor: string | undefined
  do {
    const page = await client.listTools(cursor === undefined ? {} : { cursor })
    tools.push(...page.tools)
    cursor = page.nextCursor
    if (cursor !== undefined) {
      if (seen.has(cursor)) throw new Error(`mcpToolGroup: the server repeated the tools/list cursor ${JSON.stringify(cursor)}`)
      seen.add(cursor)
    }
  } while (cursor !== undefined)
  return tools
}

export { CONTENT_RESULT_TYPE }
