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
import { whileInFlight } from './call-signal.js'
import { CONTENT_RESULT_TYPE, type McpContent, contentValue, errorMessage } from './content.js'
import { ImageStore, disposedMessage } from './image-store.js'
import { listAllTools } from './tool-list.js'

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
   * attachment id; default: a fresh temporary directory, created at the first image. The files
   * outlive the run (the host reads a result's images after it) and are deleted by `dispose()`.
   */
  imageDirectory?: string
  /**
   * Bytes of image files the group keeps on disk at once; past it, its oldest images are
   * deleted first. A positive integer, 256 MiB by default.
   */
  maxImageBytes?: number
  /** Time budget of each call, in ms; past it the call rejects in the program, naming the tool. */
  timeoutMs?: number
  /** JSON bytes each call may resolve; a larger result rejects in the program instead. */
  maxResultBytes?: number
  /** JSON bytes each call's argument may hold; a larger call is refused in the program instead. */
  maxArgumentBytes?: number
  /** The host's time one run may spend checking the server's tools' arguments (see `ToolGroupDefinition.maxSchemaCheckMsPerRun`). */
  maxSchemaCheckMsPerRun?: number
}

/** A tool group of an MCP server's tools, with the image files it wrote. */
export interface McpToolGroup extends ToolGroup {
  /** Deletes every image file the group wrote (its temporary directory too); its calls are refused after. */
  dispose(): Promise<void>
}

const MAX_IMAGE_BYTES = 256 * 1024 * 1024

/**
 * Lists every tool of `client` (following `nextCursor` across pages) and returns them as one
 * tool group: each tool is a member whose call maps to `callTool`. A result's
 * `structuredContent` becomes the value; otherwise its content does (text as a string, images
 * as `PtcImage`s, see `CONTENT_RESULT_TYPE`). An `isError` result rejects with the server's
 * message, as an instance of the group's error class, and so does an argument that does not fit
 * the tool's `inputSchema` (checked here, before the server is asked). Tools listed later are
 * not picked up: call again to refresh.
 */
export async function mcpToolGroup(client: McpClient, options: McpToolGroupOptions): Promise<McpToolGroup> {
  const { global, maxImageBytes = MAX_IMAGE_BYTES } = options
  const errorClass = options.errorClass ?? { name: `${pascalCase(String(global))}Error`, memberNameProperty: 'tool' }
  // Refuse a bad name or bound before talking to the server.
  validateBindings([{ global, functions: {}, errorClass }])
  if (!Number.isSafeInteger(maxImageBytes) || maxImageBytes <= 0) {
    throw new TypeError(`mcpToolGroup: maxImageBytes must be a positive integer (bytes), got ${JSON.stringify(maxImageBytes)}`)
  }
  const images = new ImageStore(global, options.imageDirectory, maxImageBytes)
  const description = options.description ?? client.getInstructions()

  const tools: Record<string, JsonSchemaTool> = {}
  for (const tool of await listAllTools(client, global)) {
    const name = tool.name
    tools[name] = {
      ...(tool.description !== undefined ? { description: tool.description } : {}),
      inputSchema: tool.inputSchema,
      ...(tool.outputSchema !== undefined ? { outputSchema: tool.outputSchema } : {}),
      ...(options.timeoutMs !== undefined ? { timeoutMs: options.timeoutMs } : {}),
      ...(options.maxResultBytes !== undefined ? { maxResultBytes: options.maxResultBytes } : {}),
      ...(options.maxArgumentBytes !== undefined ? { maxArgumentBytes: options.maxArgumentBytes } : {}),
      async run(args, { signal, maxResultBytes }) {
        if (images.disposed) throw new Error(disposedMessage(global))
        const result = await whileInFlight(signal, (own) => client.callTool({ name, arguments: args ?? {} }, undefined, { signal: own }))
        // Servers before protocol 2024-11-05 answer with `toolResult`.
        if ('toolResult' in result) return result.toolResult as never
        const content = result.content as McpContent[] | undefined
        if (result.isError) throw new Error(errorMessage(content, name))
        if (result.structuredContent !== undefined) return result.structuredContent as never
        return contentValue(content ?? [], images, imageBudget(maxResultBytes, options.maxResultBytes))
      },
    }
  }
  const { maxSchemaCheckMsPerRun } = options
  const group = buildToolGroup(
    { global, errorClass, tools, ...(description ? { description } : {}), ...(maxSchemaCheckMsPerRun !== undefined ? { maxSchemaCheckMsPerRun } : {}) },
    () => CONTENT_RESULT_TYPE,
  )
  return Object.assign(group, { dispose: () => images.dispose() })
}

/**
 * The bytes of images a call may resolve: the run's budget for it (the smaller of the group's
 * `maxResultBytes` and the runtime's `maxCallResultBytes`), or the group's alone outside a run.
 */
function imageBudget(call: number | undefined, group: number | undefined) {
  if (call === undefined) return group === undefined ? undefined : { bytes: group, field: "the group's maxResultBytes" }
  return { bytes: call, field: call === group ? "the group's maxResultBytes" : "maxCallResultBytes in the runtime's configuration" }
}

export { CONTENT_RESULT_TYPE }
