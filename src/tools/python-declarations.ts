/**
 * The tools as a Python model reads them: each group a class used as a namespace, holding the
 * `TypedDict`s of its arguments and results and one `async def` per tool with keyword-only
 * parameters and a docstring from the JSON Schemas, then the group's exception class.
 *
 * Why a class and not a comment header over bare functions: a model writes
 * `await weather.forecast(city="Oslo")` by copying the names it read, and only a class puts the
 * namespace in the declaration itself (`class weather:` holding `async def forecast`); the
 * group's named types nest inside it, so two groups' `Result`s never collide. The class is
 * never instantiated, so its functions take no `self`, as the namespace's members take none.
 *
 * Built only from groups that carry their definition (defineToolGroup, mcpToolGroup,
 * fromAiSdkTools); a group assembled by hand keeps its TypeScript declarations.
 */
import type { PtcBindingErrorClass } from '../seam/types.js'
import { CATALOG_GLOBAL, DEFAULT_SEARCH_LIMIT, MAX_SEARCH_LIMIT } from './catalog.js'
import { type JsonSchemaTool, type ToolGroup, type ToolGroupDefinition, type ToolGroupMember, toolGroupDefinition } from './group.js'
import { PythonClasses, type PythonScope, docstring, isPythonName, pythonLiteral, pythonNote, pythonType } from './python-types.js'

/** The one import every Python declaration block starts with. */
export const PYTHON_TYPING_IMPORT = 'from typing import Any, Literal, NotRequired, TypedDict'

/** What the runtime itself puts in every Python environment. */
export const PYTHON_RUNTIME_DECLARATIONS = `class Image:
    """An image a tool returned; \`inspect(image)\` shows it to you."""
    path: str
    width: int
    height: int
    media_type: str

def inspect(value: Any) -> None:
    """Shows an Image; prints a readable rendering of any other value."""`

/** `catalog` as a Python namespace (its members are positional: `search(query, limit=5)`). */
export const PYTHON_CATALOG_DECLARATION = `class ${CATALOG_GLOBAL}:
    """Finds tools by what they do. Exists only inside a program: call it from your code, never as a tool."""

    class Found(TypedDict):
        name: str  # "group.tool"
        description: str
        declaration: str  # its Python declaration

    async def search(query: str, /, *, limit: int = ${DEFAULT_SEARCH_LIMIT}) -> list[Found]:
        """The tools that best match a few words, best first; limit from 1 to ${MAX_SEARCH_LIMIT}."""

    async def describe(name: str, /) -> str:
        """The Python declaration of one tool, by its full name ("group.tool")."""`

/** The Python declarations of `group`, or undefined when it was assembled by hand. */
export function pythonDeclarations(group: ToolGroup): string | undefined {
  const definition = toolGroupDefinition(group)
  return definition && declarationsOf(definition, true)
}

/**
 * The groups as the catalog serves them to a Python program: the same members, each declared
 * in Python (`catalog.describe`). A group without its definition keeps its TypeScript.
 */
export function pythonCatalogGroups(groups: readonly ToolGroup[]): ToolGroup[] {
  return groups.map((group) => {
    const definition = toolGroupDefinition(group)
    if (!definition) return group
    const tools = group.tools.map((member): ToolGroupMember => {
      const toolName = member.name.slice(definition.global.length + 1)
      let declaration: string | undefined
      return {
        name: member.name,
        description: member.description,
        parameters: member.parameters,
        get declaration() {
          declaration ??= declarationsOf({ global: definition.global, tools: { [toolName]: definition.tools[toolName]! } }, false)
          return declaration
        },
      }
    })
    return { ...group, tools }
  })
}

/** The discovery listing of one group in Python: the namespace with its count, and its exception. */
export function pythonDiscoveryDeclaration(group: ToolGroup): string {
  const { global, errorClass } = group.namespace
  const line = group.description.split('\n')[0]!.trim()
  const summary = `${line === '' ? '' : `${line.replace(/\.?$/, '.')} `}${group.tools.length} tools: find them with ${CATALOG_GLOBAL}.search.`
  const block = `class ${global}:\n    ${docstring(summary, '    ')}`
  return errorClass ? `${block}\n\n${errorDeclaration(global, errorClass)}` : block
}

/** The first tool a Python program could call, as the example the description gives. */
export function pythonCallExample(groups: readonly ToolGroup[]): string {
  for (const group of groups) {
    const definition = toolGroupDefinition(group)
    const name = definition && Object.keys(definition.tools).find(isPythonName)
    if (definition && name) return `await ${definition.global}.${name}(...)`
  }
  return 'await group.tool(...)'
}

/**
 * The description's tool section for a Python program: the groups declared in Python (or, with
 * discovery on, how to find them with `catalog`, and each group with its count); groups
 * assembled by hand follow in TypeScript, with how a Python program calls them.
 */
export function pythonToolsText(groups: readonly ToolGroup[], discovery: boolean, total: number): string {
  if (discovery) {
    const first = groups.flatMap((group) => group.tools)[0]?.name ?? 'group.tool'
    const listing = [PYTHON_TYPING_IMPORT, PYTHON_RUNTIME_DECLARATIONS, PYTHON_CATALOG_DECLARATION, ...groups.map(pythonDiscoveryDeclaration)].join('\n\n')
    return [
      `0 of ${total} tools shown. Find the ones you need inside your program with the global \`${CATALOG_GLOBAL}\`: ` +
        `\`await ${CATALOG_GLOBAL}.search("words for what you need", limit=5)\` returns the best matches, each a dict of name, description and declaration, ` +
        `and \`await ${CATALOG_GLOBAL}.describe("${first}")\` one tool's Python declaration. ` +
        `Search works only inside a program: \`${CATALOG_GLOBAL}\` is not a tool you can call directly. ` +
        'Search and call in the same program when the match is clear; print what you found when it is not.',
      `Tools available as globals:\n\`\`\`python\n${listing}\n\`\`\``,
    ].join('\n\n')
  }
  const declared = groups.map((group) => pythonDeclarations(group))
  const python = declared.filter((text): text is string => text !== undefined)
  const byHand = groups.filter((_, index) => declared[index] === undefined).map((group) => group.declarations)
  const parts: string[] = []
  if (python.length > 0) {
    parts.push(
      `Tools available as globals. Each class below is a namespace of tools: call its functions on it (\`${pythonCallExample(groups)}\`), never instantiate it.\n` +
        `\`\`\`python\n${[PYTHON_TYPING_IMPORT, PYTHON_RUNTIME_DECLARATIONS, ...python].join('\n\n')}\n\`\`\``,
    )
  }
  if (byHand.length > 0) {
    parts.push(
      `${python.length > 0 ? 'These tools are' : 'Tools available as globals,'} declared in TypeScript: call each as \`await <namespace>.<tool>(name=value, ...)\` (keyword arguments, or one dict); ` +
        `a failed call raises the error class its namespace declares.\n\`\`\`ts\n${byHand.join('\n\n')}\n\`\`\``,
    )
  }
  return parts.join('\n\n')
}

/** What the model reads about each group's results, which the host converts (`convertResults`). */
const RESULTS_NOTE = 'Results arrive as JSON: dict, list, str, int, float, bool or None.'

const APPROVAL_NOTE = {
  always: "Each call waits for a person's approval; a refused call raises with their reason.",
  sometimes: "A call may wait for a person's approval; a refused call raises with their reason.",
}

function declarationsOf({ global, description, errorClass, tools }: ToolGroupDefinition, whole: boolean): string {
  const classes = new PythonClasses('    ')
  const functions = Object.entries(tools).map(([name, tool]) => functionDeclaration(global, name, tool, classes))
  const doc = whole ? [description?.trim(), RESULTS_NOTE].filter(Boolean).join('\n') : ''
  const body = [...(doc === '' ? [] : [`    ${docstring(doc, '    ')}`]), ...classes.declarations, ...functions]
  const block = `class ${global}:\n${body.join('\n\n')}`
  return whole && errorClass ? `${block}\n\n${errorDeclaration(global, errorClass)}` : block
}

function errorDeclaration(global: string, { name, memberNameProperty }: PtcBindingErrorClass): string {
  return `class ${name}(Exception):\n    """Raised by a failed \`${global}\` call; \`error.${memberNameProperty}\` names the tool."""\n    ${memberNameProperty}: str`
}

/** One tool: its signature, then a docstring of its description and its parameters' notes. */
function functionDeclaration(global: string, name: string, tool: JsonSchemaTool, classes: PythonClasses): string {
  const scope = (root: JsonSchemaTool['inputSchema']): PythonScope => ({ root, classes })
  const { parameters, notes } = signature(tool.inputSchema, scope(tool.inputSchema), name)
  const result = tool.outputSchema === undefined ? 'Any' : pythonType(tool.outputSchema, scope(tool.outputSchema), resultName(tool.outputSchema, name))
  const returns = pythonNote(tool.outputSchema)
  const approval = tool.needsApproval === undefined || tool.needsApproval === false ? undefined : APPROVAL_NOTE[tool.needsApproval === true ? 'always' : 'sometimes']
  const lead = [tool.description?.trim(), approval].filter((text) => text !== undefined && text !== '').join('\n')
  const sections = [
    ...(lead === '' ? [] : [lead]),
    ...(notes.length === 0 ? [] : [`Args:\n${notes.map((note) => `    ${note}`).join('\n')}`]),
    ...(returns === undefined ? [] : [`Returns: ${returns}`]),
  ]
  const indent = '        '
  const body = sections.length === 0 ? `${indent}...` : `${indent}${docstring(sections.join('\n\n'), indent)}`
  const python = isPythonName(name) ? name : pythonName(name)
  const reach = python === name ? '' : `    # Call it as: await ${global}[${JSON.stringify(name)}](...)\n`
  return `${reach}    async def ${python}(${parameters}) -> ${result}:\n${body}`
}

/**
 * Keyword-only parameters when the argument is an object whose properties all have Python
 * names; otherwise the one dict the namespace also takes (`tool({"a-b": 1})`).
 */
function signature(input: JsonSchemaTool['inputSchema'], scope: PythonScope, name: string): { parameters: string; notes: string[] } {
  const schema = typeof input === 'object' ? input : {}
  const properties = isRecord(schema.properties) ? schema.properties : {}
  const keys = Object.keys(properties)
  const plain = !('$ref' in schema || 'anyOf' in schema || 'oneOf' in schema || 'allOf' in schema) && (schema.type === undefined || schema.type === 'object')
  if (!plain || !keys.every(isPythonName)) {
    return { parameters: `args: ${pythonType(input, scope, `${name}-args`)}, /`, notes: [] }
  }
  const required = new Set(Array.isArray(schema.required) ? schema.required : [])
  const parameters: string[] = []
  const notes: string[] = []
  for (const key of keys) {
    const property = properties[key]
    const type = pythonType(property, scope, key)
    const fallback = isRecord(property) && 'default' in property ? pythonLiteral(property.default) : '...'
    parameters.push(required.has(key) ? `${key}: ${type}` : `${key}: ${type} = ${fallback}`)
    const note = pythonNote(isRecord(property) ? { ...property, default: undefined } : property)
    if (note !== undefined) notes.push(`${key}: ${note}`)
  }
  const additional = schema.additionalProperties
  if (additional !== undefined && additional !== false) parameters.push(`**more: ${pythonType(additional, scope, `${name}-more`)}`)
  else if (keys.length === 0 && additional === undefined) parameters.push('**args: Any')
  return { parameters: parameters.length === 0 ? '' : parameters[0]!.startsWith('**') ? parameters.join(', ') : `*, ${parameters.join(', ')}`, notes }
}

/** A result's class is named by its schema's title, else after its tool (`forecast` → `Forecast`). */
function resultName(schema: JsonSchemaTool['inputSchema'], tool: string): string {
  return typeof schema === 'object' && typeof schema.title === 'string' && schema.title.trim() !== '' ? schema.title : tool
}

/** A member name that is no Python name, as the nearest one (`get-forecast` → `get_forecast`). */
function pythonName(name: string): string {
  const replaced = name.replace(/[^A-Za-z0-9_]/g, '_')
  return isPythonName(replaced) ? replaced : `_${replaced}`
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}
