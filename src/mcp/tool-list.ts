/**
 * Every page of a server's `tools/list`, within bounds: the server decides how many pages and
 * tools it sends, and each becomes a member the host declares and checks arguments against.
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js'

type ListingClient = Pick<Client, 'listTools'> & Partial<Pick<Client, 'getServerVersion'>>

/** Pages followed, tools taken and JSON bytes of their definitions (names, descriptions, schemas, cursors), at most. */
export const MAX_TOOL_PAGES = 100
export const MAX_TOOLS = 1000
export const MAX_TOOL_LIST_BYTES = 4 * 1024 * 1024

export async function listAllTools(client: ListingClient, global: string) {
  const server = client.getServerVersion?.()?.name
  const refuse = (what: string) => new Error(`mcpToolGroup ${JSON.stringify(global)}: the server${server ? ` ${JSON.stringify(server)}` : ''} ${what}`)
  const tools = []
  const seen = new Set<string>()
  let bytes = 0
  let cursor: string | undefined
  do {
    if (seen.size >= MAX_TOOL_PAGES) throw refuse(`sent more than ${MAX_TOOL_PAGES} pages of tools/list, the most a group follows`)
    const page = await client.listTools(cursor === undefined ? {} : { cursor })
    tools.push(...page.tools)
    if (tools.length > MAX_TOOLS) throw refuse(`listed more than ${MAX_TOOLS} tools, the most a group takes`)
    cursor = page.nextCursor
    bytes += jsonBytes(page.tools, refuse) + (cursor?.length ?? 0)
    if (bytes > MAX_TOOL_LIST_BYTES) throw refuse(`listed tools of more than ${MAX_TOOL_LIST_BYTES} bytes of JSON (names, descriptions and schemas), the most a group takes`)
    if (cursor !== undefined) {
      // A repeated cursor would loop for ever.
      if (seen.has(cursor)) throw refuse(`repeated the tools/list cursor ${JSON.stringify(cursor)}`)
      seen.add(cursor)
    }
  } while (cursor !== undefined)
  return tools
}

/**
 * The JSON bytes of a page's tools as the server wrote them: fields the SDK leaves `undefined`
 * (an in-memory transport passes objects as they are) write nothing, as on the wire.
 */
function jsonBytes(tools: unknown, refuse: (what: string) => Error): number {
  try {
    return Buffer.byteLength(JSON.stringify(tools))
  } catch {
    throw refuse('listed a tool definition nested too deep to read')
  }
}
