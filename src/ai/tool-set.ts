/**
 * An AI SDK tool set as one tool group, so a user who already wrote `tool({ … })`s keeps them.
 * The SDK's own `asSchema` turns each input schema (Zod, Standard Schema or `jsonSchema(…)`)
 * into the JSON Schema the group checks arguments against and declares to the model.
 */
import { randomUUID } from 'node:crypto'
import { type Schema, type ToolSet, asSchema } from 'ai'
import { PtcCallRefusal } from '../seam/refusal.js'
import type { PtcBindingErrorClass, PtcBindingValue } from '../seam/types.js'
import { type CheckAllowance, RUN_CHECK_MS, deadlineRefusal, withinDeadline } from '../tools/check-deadline.js'
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
  /**
   * JSON bytes one call's argument may hold (default `AI_SDK_MAX_ARGUMENT_BYTES`, 256 KiB); a
   * larger call is refused in the program. The schema parses every argument on the host's
   * thread, and Zod keeps an issue of about 700 bytes per failing item: 4 MB of failing items
   * held the host's event loop 1.2 s and took 670 MB.
   */
  maxArgumentBytes?: number
  /**
   * The host's time one run may spend checking the tools' arguments (see
   * `ToolGroupDefinition.maxSchemaCheckMsPerRun`): both the group's check against the JSON
   * Schema and each tool's own parse (Zod's) are charged to it.
   */
  maxSchemaCheckMsPerRun?: number
}

/** What a model writes for a tool is small; a program may pass far more. */
export const AI_SDK_MAX_ARGUMENT_BYTES = 256 * 1024

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
  const { global, description, errorClass, maxArgumentBytes = AI_SDK_MAX_ARGUMENT_BYTES, maxSchemaCheckMsPerRun } = options
  if (typeof tools !== 'object' || tools === null) throw new TypeError(`fromAiSdkTools "${global}": tools must be an object of AI SDK tools`)
  const limitMs = maxSchemaCheckMsPerRun ?? RUN_CHECK_MS
  const members: Record<string, JsonSchemaTool> = {}
  for (const [name, tool] of Object.entries(tools)) {
    const { execute, needsApproval } = tool
    if (typeof execute !== 'function') {
      throw new TypeError(`fromAiSdkTools "${global}": tool ${JSON.stringify(name)} has no execute function, so a program cannot call it (provider-executed and client-side tools are not supported)`)
    }
    const input = asSchema(tool.inputSchema)
    const parse = parserOf(`${global}.${name}`, tool.inputSchema, input)
    const output = tool.outputSchema === undefined ? undefined : asSchema(tool.outputSchema)
    members[name] = {
      maxArgumentBytes,
      ...(tool.description !== undefined ? { description: tool.description } : {}),
      inputSchema: (await input.jsonSchema) as JsonSchema,
      ...(output ? { outputSchema: (await output.jsonSchema) as JsonSchema } : {}),
      ...(needsApproval !== undefined
        ? { needsApproval: typeof needsApproval === 'function' ? async (args: unknown) => await needsApproval(args as never, { toolCallId: randomUUID(), messages: [] }) : needsApproval }
        : {}),
      async run(args, { signal, ledger }) {
        const value = await parse(args === undefined ? {} : args, { ledger, limitMs })
        const result = await execute(value as never, { toolCallId: randomUUID(), messages: [], abortSignal: signal })
        return (isAsyncIterable(result) ? await lastOf(result) : result) as PtcBindingValue
      },
    }
  }
  return defineToolGroup({
    global,
    tools: members,
    ...(description !== undefined ? { description } : {}),
    ...(errorClass ? { errorClass } : {}),
    ...(maxSchemaCheckMsPerRun !== undefined ? { maxSchemaCheckMsPerRun } : {}),
  })
}

/**
 * How a call's argument is parsed as the SDK would (Zod defaults and transforms apply), once the
 * group has checked it against the JSON Schema. A Standard Schema (Zod is one) is asked directly:
 * its issues come as a list, where the SDK's error would format every one of them (a million
 * failing items of 4 MB made 100 MB of text on the host's thread). The refusal names the first.
 */
function parserOf(label: string, inputSchema: unknown, schema: Schema<unknown>): (args: unknown, allowance: CheckAllowance) => Promise<unknown> {
  const standard = standardValidate(inputSchema)
  if (standard) {
    return async (args, allowance) => {
      const result = await watchedParse(label, allowance, () => standard(args))
      if (result.issues) throw new PtcCallRefusal(`${label}: invalid arguments: ${firstIssue(result.issues)}`)
      return result.value
    }
  }
  const { validate } = schema
  if (!validate) return async (args) => args
  return async (args, allowance) => {
    const result = await watchedParse(label, allowance, () => validate(args))
    if (!result.success) throw new PtcCallRefusal(`${label}: invalid arguments: ${result.error.message}`)
    return result.value
  }
}

type StandardResult = { value: unknown; issues?: undefined } | { issues: ReadonlyArray<StandardIssue> }
interface StandardIssue {
  message: string
  path?: ReadonlyArray<PropertyKey | { key: PropertyKey }>
}

/** The Standard Schema `validate` of `schema`, when it is one. */
function standardValidate(schema: unknown): ((value: unknown) => StandardResult | Promise<StandardResult>) | undefined {
  const standard = (schema as { '~standard'?: { validate?: unknown } } | null | undefined)?.['~standard']
  const validate = standard?.validate
  return typeof validate === 'function' ? (value) => validate.call(standard, value) as StandardResult | Promise<StandardResult> : undefined
}

/**
 * The schema's own parse, which a program's argument can make slow whatever the JSON Schema says
 * (Zod's formats, refinements and unions run here, not in Ajv), checked as the group's checks
 * are: under the watchdog, charged to the run's budget and refused once it is spent. A parse
 * that returns a promise (async refinements) is watched for its synchronous part only, as the
 * watchdog cannot follow it past its first await, but charged for all its time until it settles
 * (an async refinement's own I/O included: raise the budget for such tools). A schema that runs out of stack or
 * string length (Zod overflows its stack on a million failing items) refuses the call too: the
 * tool did not fail.
 */
async function watchedParse<T>(label: string, allowance: CheckAllowance, check: () => T | PromiseLike<T>): Promise<T> {
  const { ledger } = allowance
  const started = performance.now()
  const chargedBefore = ledger?.schemaCheckMs ?? 0
  try {
    const parsed = withinDeadline(true, 0, allowance, check)
    if (ledger === undefined || !isPromiseLike(parsed)) return await parsed
    const syncMs = ledger.schemaCheckMs - chargedBefore
    try {
      return await parsed
    } finally {
      // What ran until it settled was mostly the parse's own microtasks: charged by the clock.
      ledger.schemaCheckMs += Math.max(0, performance.now() - started - syncMs)
    }
  } catch (error) {
    if (error instanceof RangeError) throw new PtcCallRefusal(`${label}: invalid arguments: the schema could not check them (${error.message}); pass a smaller or shallower argument`)
    throw deadlineRefusal(label, error) ?? error
  }
}

/** `$.a[0]: Invalid URL (and 3 more issues)`: the first issue, where it is, and how many follow. */
function firstIssue(issues: ReadonlyArray<StandardIssue>): string {
  const [first] = issues
  if (first === undefined) return 'the schema rejected them'
  const path = (first.path ?? []).map((part) => (typeof part === 'object' && part !== null ? part.key : part))
  const where = path.map((key) => (typeof key === 'number' ? `[${key}]` : `.${String(key)}`)).join('')
  const more = issues.length > 1 ? ` (and ${issues.length - 1} more ${issues.length === 2 ? 'issue' : 'issues'})` : ''
  return `$${where}: ${first.message}${more}`
}

function isPromiseLike<T>(value: T | PromiseLike<T>): value is PromiseLike<T> {
  return typeof (value as { then?: unknown } | null)?.then === 'function'
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
