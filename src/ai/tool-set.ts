/**
 * An AI SDK tool set as one tool group, so a user who already wrote `tool({ … })`s keeps them.
 * The SDK's own `asSchema` turns each input schema (Zod, Standard Schema or `jsonSchema(…)`)
 * into the JSON Schema the group checks arguments against and declares to the model.
 */
import { randomUUID } from 'node:crypto'
import { type Schema, type ToolSet, asSchema } from 'ai'
import { PtcCallRefusal } from '../seam/refusal.js'
import type { PtcBindingErrorClass, PtcBindingValue } from '../seam/types.js'
import { type JsonSchemaTool, type ToolGroup, defineToolGroup } from '../tools/group.js'
import type { JsonSchema } from '../tools/schema-types.js'

/** How an AI SDK tool set appears to programs. */
export interface AiSdkToolGroupOptions {
  /** Program-visible global name of the group (the binding name rules apply). */
  global: string
  /** What the group is, for the model; becomes the JSDoc of the global. */
  description?: string
  /** When given, a failed call rejects with an instance of this class inside the program. */
  errorClass?: PtcBindingErrorClass
}

/**
 * Turns AI SDK tools into one tool group whose members are the set's keys. Each tool's
 * `inputSchema` (and `outputSchema`, when it has one) becomes JSON Schema through the SDK's
 * `asSchema`; a call's argument is checked against it, then parsed by the schema itself as the
 * SDK would (so Zod defaults and transforms apply), and `execute` gets the parsed value with
 * `{ toolCallId, messages: [], abortSignal }`, the signal aborting when the run settles. A tool
 * that streams (an async iterable) resolves with its last value. A tool's `needsApproval` holds
 * the call as `JsonSchemaTool.needsApproval` does. Asynchronous because a schema may give its
 * JSON Schema as a promise. Rejects, naming the tool, for a tool without `execute` (a
 * provider-executed or client-side tool cannot run inside a program), and as `defineToolGroup`
 * does for a bad name.
 */
export async function fromAiSdkTools(tools: ToolSet, options: AiSdkToolGroupOptions): Promise<ToolGroup> {
  const { global, description, errorClass } = options
  if (typeof tools !== 'object' || tools === null) throw new TypeError(`fromAiSdkTools "${global}": tools must be an object of AI SDK tools`)
  const members: Record<string, JsonSchemaTool> = {}
  for (const [name, tool] of Object.entries(tools)) {
    const { execute, needsApproval } = tool
    if (typeof execute !== 'function') {
      throw new TypeError(`fromAiSdkTools "${global}": tool ${JSON.stringify(name)} has no execute function, so a program cannot call it (provider-executed and client-side tools are not supported)`)
    }
    const input = asSchema(tool.inputSchema)
    const output = tool.outputSchema === undefined ? undefined : asSchema(tool.outputSchema)
    const label = `${global}.${name}`
    members[name] = {
      ...(tool.description !== undefined ? { description: tool.description } : {}),
      inputSchema: (await input.jsonSchema) as JsonSchema,
      ...(output ? { outputSchema: (await output.jsonSchema) as JsonSchema } : {}),
      ...(needsApproval !== undefined
        ? { needsApproval: typeof needsApproval === 'function' ? async (args: unknown) => await needsApproval(args as never, { toolCallId: randomUUID(), messages: [] }) : needsApproval }
        : {}),
      async run(args, { signal }) {
        const value = await parsed(label, input, args)
        const result = await execute(value as never, { toolCallId: randomUUID(), messages: [], abortSignal: signal })
        return (isAsyncIterable(result) ? await lastOf(result) : result) as PtcBindingValue
      },
    }
  }
  return defineToolGroup({ global, tools: members, ...(description !== undefined ? { description } : {}), ...(errorClass ? { errorClass } : {}) })
}

/** The argument as the schema parses it; the group has already checked it against the JSON Schema. */
async function parsed(label: string, schema: Schema<unknown>, args: unknown): Promise<unknown> {
  if (!schema.validate) return args
  const result = await schema.validate(args === undefined ? {} : args)
  if (!result.success) throw new PtcCallRefusal(`${label}: invalid arguments: ${result.error.message}`)
  return result.value
}

function isAsyncIterable(value: unknown): value is AsyncIterable<unknown> {
  return typeof value === 'object' && value !== null && Symbol.asyncIterator in value
}

/** A streaming tool's final output, as the SDK reports it: the last value it yielded. */
async function lastOf(values: AsyncIterable<unknown>): Promise<unknown> {
  let last: unknown
  for await (const value of values) last = value
  return last
}
