/**
 * From tools described the way model APIs describe them (a description and JSON schemas) to
 * the two things a run needs: the binding namespace the runtime installs, and the TypeScript
 * declarations of the same namespace that the model reads.
 */
import { validateBindings } from '../seam/names.js'
import type { PtcBindingErrorClass, PtcBindingFunction, PtcBindingNamespace, PtcBindingValue, PtcCallLimits, PtcJsonValue, PtcRunLedger } from '../seam/types.js'
import { docComment } from './doc-comment.js'
import { argumentCheck } from './validation.js'
import { RUN_CHECK_MS } from './check-deadline.js'
import { type JsonSchema, NamedTypes, type SchemaScope, describe, propertyKey, typeText } from './schema-types.js'

/** One host tool: what the model is told about it, and the function that does the work. */
export interface JsonSchemaTool {
  /** What the tool does, for the model; becomes the member's JSDoc. */
  description?: string
  /** JSON Schema of the one argument the program passes. */
  inputSchema: JsonSchema
  /** JSON Schema of what the tool resolves; without it the declared result is `unknown`. */
  outputSchema?: JsonSchema
  /**
   * Each call waits for a person's approval before `run`: the run answers with `result.paused`
   * (payload `null`) and goes on with `runtime.resume(id, { approve: true })`; refused, the
   * program's call rejects with the reason. A function decides per call from its arguments.
   * Arguments are checked against `inputSchema` first, so a person never approves a call that
   * would be refused.
   */
  needsApproval?: boolean | ((args: any) => boolean | Promise<boolean>)
  /**
   * Does the work. Receives the program's argument (lossless JSON that fits `inputSchema`: a
   * call whose argument does not is refused before `run`) and the call's context (see
   * `ToolCall`). What it resolves reaches the program as `JSON.stringify` would write it (see
   * `PtcBindingNamespace.convertResults`): `undefined` as `undefined` (a tool that returns
   * nothing), a `Date` as its ISO string, fields that are `undefined` dropped; `PtcImage`s as
   * images. A function, a cycle, a BigInt or a non-finite number fails the program's call.
   */
  run(args: any, call: ToolCall): unknown
  /** Time budget of one call, in ms; past it the call rejects in the program, naming the tool. */
  timeoutMs?: number
  /** JSON bytes one call may resolve; a larger result rejects in the program instead. */
  maxResultBytes?: number
  /**
   * JSON bytes one call's argument may hold; a larger call is refused in the program before its
   * schema is checked or `run` runs (what the tool computes on its argument grows with it).
   */
  maxArgumentBytes?: number
}

/** What a tool's `run` gets besides the program's argument. */
export interface ToolCall {
  /** Aborts when the run settles or the call runs past `timeoutMs`. */
  signal: AbortSignal
  /**
   * Asks for a decision taken outside the run (a question to the user, an OAuth sign-in): the
   * run answers with `result.paused` carrying `payload` (lossless JSON) while the program waits.
   * Resolves with the decision's `value` once `runtime.resume(id, { approve: true, value })`
   * answers; rejects with the reason when refused (uncaught, the program's call rejects with it).
   */
  interrupt(payload: PtcJsonValue): Promise<PtcJsonValue | undefined>
  /**
   * The run's ledger (`PtcBindingCall.ledger`), for a tool that checks its argument further on
   * the host's thread and charges that to the run's budget of schema checking, as `fromAiSdkTools`
   * does with each tool's own schema. Absent when a host calls the tool itself.
   */
  ledger?: PtcRunLedger
  /** The JSON bytes this call may resolve (`PtcBindingCall.maxResultBytes`); absent when a host calls the tool itself. */
  maxResultBytes?: number
}

/** Tools the program sees as the members of one global object. */
export interface ToolGroupDefinition {
  /** Program-visible global name (the binding name rules apply: see `validateBindings`). */
  global: string
  /** What the group is, for the model; becomes the JSDoc of the global. */
  description?: string
  /** When given, a failed call rejects with an instance of this class inside the program. */
  errorClass?: PtcBindingErrorClass
  /** Member name → tool. Member names are free-form; non-identifiers are declared quoted. */
  tools: Record<string, JsonSchemaTool>
  /**
   * The host's time, in ms, one run may spend in all checking this group's arguments (every
   * check is timed; those that may take long, such as unions, references and large arguments,
   * are also stopped at 250 ms each): past it, the run's further calls of this group are refused
   * without a check. 1 000 by default; a positive integer.
   */
  maxSchemaCheckMsPerRun?: number
}

/** What `defineToolGroup` returns: the namespace for `run`, and its declarations for the model. */
export interface ToolGroup {
  /** Pass it in `PtcRunRequest.bindings`. */
  namespace: PtcBindingNamespace
  /** TypeScript declarations of the global, its named types and its error class. */
  declarations: string
  /** The group's description, as given (`''` without one). */
  description: string
  /** Each tool, as in-program discovery (`createRunCodeTool`'s `catalog`) finds and shows it. */
  tools: readonly ToolGroupMember[]
}

/** One tool of a group, as discovery sees it. */
export interface ToolGroupMember {
  /** `global.member`, e.g. `github.create_issue`. */
  name: string
  /** The tool's description (`''` without one). */
  description: string
  /** The names and descriptions of its argument's properties, as one text to search. */
  parameters: string
  /** The TypeScript declaration of this tool alone, with the named types it uses; built at first read. */
  readonly declaration: string
}

/**
 * The declared result type of a tool without an `outputSchema`. Internal: MCP tools describe
 * what their content becomes.
 */
export type ResultTypeFallback = (name: string) => string

/**
 * Builds a group's binding namespace and its TypeScript declarations from JSON-Schema tools.
 * Each call's argument is checked against its tool's `inputSchema` (see `validation.ts`)
 * before `run`; a mismatch rejects in the program with the group's error class, naming the
 * tool and the JSON path of the first error. Throws, naming the field and the rule, when the definition is malformed: a bad global or
 * error-class name, a tool without `run`, a schema that is not a schema, or a `$ref` that
 * does not resolve inside its schema.
 */
export function defineToolGroup(definition: ToolGroupDefinition): ToolGroup {
  return buildToolGroup(definition, () => 'unknown')
}

export function buildToolGroup(definition: ToolGroupDefinition, resultFallback: ResultTypeFallback): ToolGroup {
  if (typeof definition !== 'object' || definition === null) throw new TypeError('defineToolGroup: the definition must be an object')
  const { global, description, errorClass, tools, maxSchemaCheckMsPerRun = RUN_CHECK_MS } = definition
  if (typeof tools !== 'object' || tools === null) throw new TypeError(`tool group "${global}": tools must be an object of tools`)
  if (description !== undefined && typeof description !== 'string') throw new TypeError(`tool group "${global}": description must be a string`)
  if (!Number.isSafeInteger(maxSchemaCheckMsPerRun) || maxSchemaCheckMsPerRun <= 0) {
    throw new TypeError(`tool group "${global}": maxSchemaCheckMsPerRun must be a positive integer (ms), got ${JSON.stringify(maxSchemaCheckMsPerRun)}`)
  }

  const functions: Record<string, PtcBindingFunction> = {}
  const limits: Record<string, PtcCallLimits> = {}
  for (const [name, tool] of Object.entries(tools)) {
    const field = `tool group "${global}": tools[${JSON.stringify(name)}]`
    if (typeof tool !== 'object' || tool === null) throw new TypeError(`${field} must be an object`)
    if (typeof tool.run !== 'function') throw new TypeError(`${field}.run must be a function`)
    if (tool.description !== undefined && typeof tool.description !== 'string') throw new TypeError(`${field}.description must be a string`)
    if (tool.inputSchema === undefined) throw new TypeError(`${field}.inputSchema is required (a JSON Schema)`)
    const { run, needsApproval } = tool
    if (needsApproval !== undefined && typeof needsApproval !== 'boolean' && typeof needsApproval !== 'function') {
      throw new TypeError(`${field}.needsApproval must be a boolean or a function of the arguments`)
    }
    const check = argumentCheck(`${global}.${name}`, tool.inputSchema, maxSchemaCheckMsPerRun)
    functions[name] = async (args, { signal, hold, argumentBytes, ledger, maxResultBytes: resultBytes }) => {
      // Called outside a run, the argument's size is unknown: its check is watched as a large one's, with no run to charge.
      check(args, { argumentBytes: argumentBytes ?? Number.POSITIVE_INFINITY, ledger })
      if (needsApproval === true || (typeof needsApproval === 'function' && Boolean(await needsApproval(args)))) await hold(null)
      // Converted by the host as JSON.stringify would (the namespace's convertResults).
      return run(args, { signal, interrupt: hold, ...(ledger !== undefined ? { ledger } : {}), ...(resultBytes !== undefined ? { maxResultBytes: resultBytes } : {}) }) as PtcBindingValue
    }
    const { timeoutMs, maxResultBytes, maxArgumentBytes } = tool
    if (timeoutMs !== undefined || maxResultBytes !== undefined || maxArgumentBytes !== undefined) {
      limits[name] = {
        ...(timeoutMs !== undefined ? { timeoutMs } : {}),
        ...(maxResultBytes !== undefined ? { maxResultBytes } : {}),
        ...(maxArgumentBytes !== undefined ? { maxArgumentBytes } : {}),
      }
    }
  }
  const namespace: PtcBindingNamespace = {
    global,
    functions,
    convertResults: true,
    ...(errorClass ? { errorClass } : {}),
    ...(Object.keys(limits).length > 0 ? { limits } : {}),
  }
  validateBindings([namespace])
  const members = Object.entries(tools).map(([name, tool]): ToolGroupMember => {
    let declaration: string | undefined
    return {
      name: `${global}.${name}`,
      description: tool.description?.trim() ?? '',
      parameters: parameterText(tool.inputSchema),
      get declaration() {
        declaration ??= declarationsOf({ global, tools: { [name]: tool } }, resultFallback, false)
        return declaration
      },
    }
  })
  const group: ToolGroup = { namespace, declarations: declarationsOf(definition, resultFallback), description: description?.trim() ?? '', tools: members }
  definitions.set(group, definition)
  return group
}

/** Each built group's definition, so its declarations can also be written in another language. */
const definitions = new WeakMap<ToolGroup, ToolGroupDefinition>()

/** The definition `group` was built from; undefined for a group assembled by hand. Internal. */
export function toolGroupDefinition(group: ToolGroup): ToolGroupDefinition | undefined {
  return definitions.get(group)
}

/** The property names and descriptions of an object schema, one level deep. */
function parameterText(schema: JsonSchema): string {
  if (typeof schema !== 'object' || typeof schema.properties !== 'object' || schema.properties === null) return ''
  return Object.entries(schema.properties as Record<string, unknown>)
    .map(([key, property]) => {
      const text = typeof property === 'object' && property !== null ? (property as { description?: unknown }).description : undefined
      return typeof text === 'string' ? `${key} ${text}` : key
    })
    .join(' ')
}

/** What the model reads about every group's results, which the host converts (`convertResults`). */
const RESULTS_NOTE = 'Results arrive as JSON.stringify writes them (a Date as its ISO string, undefined fields dropped); a tool that returns nothing resolves undefined.'

/** The declarations of a group (`whole`), or of one of its tools for discovery, without the group's notes. */
function declarationsOf({ global, description, errorClass, tools }: ToolGroupDefinition, resultFallback: ResultTypeFallback, whole = true): string {
  const names = new NamedTypes(global)
  const members = Object.entries(tools).map(([name, tool]) => {
    const label = `tool group "${global}": tools[${JSON.stringify(name)}]`
    const scope = (field: string, suffix: string, root: JsonSchema): SchemaScope => ({
      root,
      rootName: `${name}-${suffix}`,
      label: `${label}.${field}#`,
      names,
    })
    const args = rootType(tool.inputSchema, scope('inputSchema', 'args', tool.inputSchema))
    const result = tool.outputSchema === undefined ? resultFallback(name) : rootType(tool.outputSchema, scope('outputSchema', 'result', tool.outputSchema))
    const doc = [
      tool.description?.trim(),
      tool.needsApproval === undefined || tool.needsApproval === false ? undefined : APPROVAL_NOTE[tool.needsApproval === true ? 'always' : 'sometimes'],
      tagged('@param args', describe(tool.inputSchema)),
      tagged('@returns', tool.outputSchema === undefined ? undefined : describe(tool.outputSchema)),
    ].filter((line) => line !== undefined && line !== '')
    const optional = argumentsOptional(tool.inputSchema) ? '?' : ''
    return `${docComment(doc.join('\n'), '  ')}  ${propertyKey(name)}(args${optional}: ${args}): Promise<${result}>`
  })

  const doc = whole ? [description?.trim(), RESULTS_NOTE].filter(Boolean).join('\n') : description
  const blocks = [`${docComment(doc, '')}declare const ${global}: {\n${members.join('\n')}\n}`]
  if (names.declarations.length > 0) blocks.push(`declare namespace ${global} {\n${names.declarations.join('\n')}\n}`)
  if (errorClass) {
    blocks.push(
      `/** Thrown by a failed \`${global}\` call; \`error.${errorClass.memberNameProperty}\` names the tool. */\n` +
        `declare class ${errorClass.name} extends Error { ${propertyKey(errorClass.memberNameProperty)}: string }`,
    )
  }
  return blocks.join('\n')
}

/** What the model reads about a tool that waits for a person, so it catches a refusal. */
const APPROVAL_NOTE = {
  always: "Each call waits for a person's approval; a refused call throws with their reason.",
  sometimes: "A call may wait for a person's approval; a refused call throws with their reason.",
}

/** A schema that refers to itself (`$ref: "#"`) is named once and used by that name. */
function rootType(schema: JsonSchema, scope: SchemaScope): string {
  if (typeof schema === 'object' && JSON.stringify(schema).includes('"$ref":"#"')) {
    return scope.names.nameOf(schema, scope.rootName, (root) => typeText(root, scope, '  ', ''))
  }
  return typeText(schema, scope, '  ', '')
}

/** A call may omit its argument when nothing in it is required. */
function argumentsOptional(schema: JsonSchema): boolean {
  if (typeof schema === 'boolean') return schema
  if (typeof schema.$ref === 'string' || 'anyOf' in schema || 'oneOf' in schema || 'allOf' in schema) return false
  const required = Array.isArray(schema.required) && schema.required.length > 0
  const type = schema.type
  return !required && (type === undefined || type === 'object')
}

/** Only a schema's own description goes into a tag; constraints stay with the type. */
function tagged(tag: string, text: string | undefined): string | undefined {
  const first = text?.split('\n').find((line) => !line.startsWith('@'))
  return first === undefined ? undefined : `${tag} ${first}`
}

/**
 * Throws, saying what to pass, when `groups` is not a list of tool groups: a binding namespace
 * (`group.namespace`, or one written by hand) passed where its group belongs is the usual slip.
 */
export function checkToolGroups(groups: unknown, caller: string): asserts groups is readonly ToolGroup[] {
  if (!Array.isArray(groups)) throw new TypeError(`${caller}: groups must be an array of tool groups (what defineToolGroup, mcpToolGroup and fromAiSdkTools return)`)
  groups.forEach((group: unknown, index) => {
    if (typeof group !== 'object' || group === null) throw new TypeError(`${caller}: groups[${index}] must be a tool group, got ${group === null ? 'null' : typeof group}`)
    const namespace = (group as { namespace?: unknown }).namespace
    if (typeof namespace === 'object' && namespace !== null) return
    if ('functions' in group && 'global' in group) {
      const global = (group as { global: unknown }).global
      throw new TypeError(
        `${caller}: groups[${index}] is a binding namespace (${JSON.stringify(global)}), not a tool group: pass the group itself (what defineToolGroup, mcpToolGroup and fromAiSdkTools return), not its .namespace`,
      )
    }
    throw new TypeError(`${caller}: groups[${index}] is not a tool group (it has no namespace): build it with defineToolGroup, mcpToolGroup or fromAiSdkTools`)
  })
}
