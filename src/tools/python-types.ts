/**
 * JSON Schema → Python type annotations, for the declarations a Python model reads. The
 * counterpart of schema-types.ts: an object with properties becomes a `TypedDict` class named
 * after where it sits (a tool's result after the tool, a property after the property), a `$ref`
 * target one class named once, an enum a `Literal[...]`; what Python's types cannot say
 * (`allOf` of several schemas, a tuple's positions) becomes `dict[str, Any]` or `Any`, and the
 * constraints go into a comment beside the field.
 */
import { type JsonSchema, pascalCase } from './schema-types.js'

type SchemaObject = { [keyword: string]: unknown }

/** Python's hard keywords: never a parameter, field or function name. */
const KEYWORDS = new Set([
  'False', 'None', 'True', 'and', 'as', 'assert', 'async', 'await', 'break', 'class', 'continue', 'def', 'del', 'elif', 'else',
  'except', 'finally', 'for', 'from', 'global', 'if', 'import', 'in', 'is', 'lambda', 'nonlocal', 'not', 'or', 'pass', 'raise',
  'return', 'try', 'while', 'with', 'yield',
])

// Names the annotations use unqualified; a class must not shadow them.
const TAKEN = new Set(['Any', 'Literal', 'NotRequired', 'TypedDict', 'Never', 'Exception', 'Image'])

/** Whether `name` can be written as a Python name (a parameter, a field, a function). */
export function isPythonName(name: string): boolean {
  return /^[A-Za-z_][A-Za-z0-9_]*$/.test(name) && !KEYWORDS.has(name)
}

/**
 * The classes of one namespace: every object type with properties and every `$ref` target,
 * each declared once (in the order first seen, before the functions that use them).
 */
export class PythonClasses {
  private readonly _byTarget = new Map<object, string>()
  private readonly _used = new Set<string>(TAKEN)
  /** The class declarations, each indented by `indent`. */
  readonly declarations: string[] = []

  constructor(private readonly indent: string) {}

  /** The class name of `target`, declaring it the first time it is seen. */
  nameOf(target: SchemaObject, suggested: string, at: PythonScope): string {
    const known = this._byTarget.get(target)
    if (known) return known
    const base = pascalCase(suggested)
    let name = base
    for (let suffix = 2; this._used.has(name); suffix++) name = `${base}${suffix}`
    this._used.add(name)
    // Named before its fields render, so a type that contains itself finds its own name.
    this._byTarget.set(target, name)
    this.declarations.push(typedDict(name, target, at, this.indent))
    return name
  }
}

/** Where a schema sits: the document its `$ref`s resolve against, and the classes of its namespace. */
export interface PythonScope {
  root: JsonSchema
  classes: PythonClasses
}

/** The annotation of `schema`; `suggested` names the class an object with properties becomes. */
export function pythonType(schema: unknown, scope: PythonScope, suggested: string): string {
  if (schema === undefined || schema === true) return 'Any'
  if (schema === false || !isObject(schema)) return schema === false ? 'Never' : 'Any'
  if (typeof schema.$ref === 'string') return refType(schema.$ref, scope)
  let text: string
  if ('const' in schema) text = literal([schema.const]) ?? baseType(schema, scope, suggested) ?? 'Any'
  else if (Array.isArray(schema.enum)) text = schema.enum.length === 0 ? 'Never' : literal(schema.enum) ?? baseType(schema, scope, suggested) ?? 'Any'
  else if (Array.isArray(schema.anyOf) || Array.isArray(schema.oneOf)) {
    const members = (Array.isArray(schema.anyOf) ? schema.anyOf : schema.oneOf) as unknown[]
    const types = union(members.map((member, index) => pythonType(member, scope, suggested)))
    text = types.includes('Any') ? 'Any' : types.join(' | ')
  } else if (Array.isArray(schema.allOf)) {
    // One schema is itself; several are an intersection Python's annotations cannot write.
    text = schema.allOf.length === 1 ? pythonType(schema.allOf[0], scope, suggested) : 'dict[str, Any]'
  } else text = baseType(schema, scope, suggested) ?? 'Any'
  return schema.nullable === true && text !== 'Any' && text !== 'None' && !text.endsWith(' | None') ? `${text} | None` : text
}

/** The type from `type` (or what `properties`/`items` imply); undefined when nothing constrains it. */
function baseType(schema: SchemaObject, scope: PythonScope, suggested: string): string | undefined {
  let types: unknown[]
  if (Array.isArray(schema.type)) types = schema.type
  else if (typeof schema.type === 'string') types = [schema.type]
  else if ('properties' in schema || 'additionalProperties' in schema || 'required' in schema) types = ['object']
  else if ('items' in schema || 'prefixItems' in schema) types = ['array']
  else return undefined
  const rendered = union(types.map((type) => {
    switch (type) {
      case 'string':
        return 'str'
      case 'integer':
        return 'int'
      case 'number':
        return 'float'
      case 'boolean':
        return 'bool'
      case 'null':
        return 'None'
      case 'array':
        return arrayType(schema, scope, suggested)
      case 'object':
        return objectType(schema, scope, suggested)
      default:
        return 'Any'
    }
  }))
  return rendered.includes('Any') ? 'Any' : rendered.join(' | ')
}

function objectType(schema: SchemaObject, scope: PythonScope, suggested: string): string {
  if (isObject(schema.properties) && Object.keys(schema.properties).length > 0) return scope.classes.nameOf(schema, suggested, scope)
  const additional = schema.additionalProperties
  return `dict[str, ${isObject(additional) ? pythonType(additional, scope, `${suggested}Value`) : 'Any'}]`
}

function arrayType(schema: SchemaObject, scope: PythonScope, suggested: string): string {
  const item = singular(suggested)
  // A tuple arrives as a list; its positions are listed in the comment, not the type.
  const tuple = Array.isArray(schema.prefixItems) ? schema.prefixItems : Array.isArray(schema.items) ? schema.items : undefined
  if (tuple) {
    const types = union(tuple.map((member, index) => pythonType(member, scope, `${item}${index + 1}`)))
    return `list[${types.length === 0 || types.includes('Any') ? 'Any' : types.join(' | ')}]`
  }
  return `list[${pythonType(schema.items, scope, item)}]`
}

function refType(ref: string, scope: PythonScope): string {
  if (!ref.startsWith('#')) return 'Any'
  const segments = ref === '#' || ref === '#/' ? [] : ref.slice(ref.startsWith('#/') ? 2 : 1).split('/').map(decodeSegment)
  let target: unknown = scope.root
  for (const segment of segments) target = isObject(target) || Array.isArray(target) ? (target as Record<string, unknown>)[segment] : undefined
  // The TypeScript declarations of the same group already refused a $ref that does not resolve.
  if (!isObject(target)) return target === false ? 'Never' : 'Any'
  const suggested = segments.at(-1) ?? 'Args'
  if (isObject(target.properties) && Object.keys(target.properties).length > 0) return scope.classes.nameOf(target, suggested, scope)
  return pythonType(target, scope, suggested)
}

/** A `TypedDict` class for an object schema; the functional form when a key is no Python name. */
function typedDict(name: string, schema: SchemaObject, scope: PythonScope, indent: string): string {
  const properties = schema.properties as Record<string, unknown>
  const required = new Set(Array.isArray(schema.required) ? schema.required : [])
  const fields = Object.entries(properties).map(([key, property]) => {
    const type = pythonType(property, scope, key)
    return { key, type: required.has(key) ? type : `NotRequired[${type}]`, note: pythonNote(property) }
  })
  const doc = pythonNote(schema)
  if (fields.every(({ key }) => isPythonName(key))) {
    const inner = `${indent}    `
    const lines = fields.map(({ key, type, note }) => `${inner}${key}: ${type}${note === undefined ? '' : `  # ${note}`}`)
    return `${indent}class ${name}(TypedDict):\n${doc === undefined ? '' : `${inner}${docstring(doc, inner)}\n`}${lines.join('\n')}`
  }
  const entries = fields.map(({ key, type, note }) => `${indent}    ${JSON.stringify(key)}: ${type},${note === undefined ? '' : `  # ${note}`}`)
  return `${doc === undefined ? '' : `${indent}# ${doc}\n`}${indent}${name} = TypedDict(${JSON.stringify(name)}, {\n${entries.join('\n')}\n${indent}})`
}

// Keywords worth telling the model that a Python annotation cannot say.
const CONSTRAINTS: Array<[string, string]> = [
  ['format', 'format'], ['pattern', 'pattern'], ['minimum', 'minimum'], ['maximum', 'maximum'],
  ['exclusiveMinimum', 'above'], ['exclusiveMaximum', 'below'], ['multipleOf', 'multiple of'],
  ['minLength', 'min length'], ['maxLength', 'max length'], ['minItems', 'min items'], ['maxItems', 'max items'],
  ['uniqueItems', 'unique items'], ['default', 'default'], ['deprecated', 'deprecated'],
]

/** One line about a schema: its description's first line, then its constraints. */
export function pythonNote(schema: unknown): string | undefined {
  if (!isObject(schema)) return undefined
  const parts: string[] = []
  const text = typeof schema.description === 'string' && schema.description.trim() !== '' ? schema.description : schema.title
  if (typeof text === 'string' && text.trim() !== '') parts.push(text.trim().split(/\r?\n/)[0]!.trim())
  const constraints: string[] = []
  for (const [keyword, label] of CONSTRAINTS) {
    const value = schema[keyword]
    if (value === undefined || value === false) continue
    constraints.push(value === true ? label : `${label} ${keyword === 'pattern' || keyword === 'format' ? String(value) : pythonLiteral(value)}`)
  }
  if (constraints.length > 0) parts.push(constraints.join(', '))
  return parts.length === 0 ? undefined : parts.join('; ')
}

/** A JSON value as a Python literal (`True`, `None`, `"text"`, `[1, 2]`). */
export function pythonLiteral(value: unknown): string {
  if (value === null || value === undefined) return 'None'
  if (value === true) return 'True'
  if (value === false) return 'False'
  if (Array.isArray(value)) return `[${value.map(pythonLiteral).join(', ')}]`
  if (isObject(value)) return `{${Object.entries(value).map(([key, field]) => `${JSON.stringify(key)}: ${pythonLiteral(field)}`).join(', ')}}`
  return JSON.stringify(value)
}

/** A docstring at `indent` (its first line already placed): one line, or the text's lines indented. */
export function docstring(text: string, indent: string): string {
  const lines = text.trim().replaceAll('\\', '\\\\').replaceAll('"""', '\\"\\"\\"').split(/\r?\n/)
  if (lines.length === 1) return `"""${lines[0]}"""`
  return `"""${lines[0]}\n${lines.slice(1).map((line) => (line.trim() === '' ? '' : `${indent}${line}`)).join('\n')}\n${indent}"""`
}

/** `Literal[...]` of `values` when Python's Literal can hold them all (str, int, bool, None). */
function literal(values: unknown[]): string | undefined {
  const fits = values.every((value) => value === null || typeof value === 'string' || typeof value === 'boolean' || (typeof value === 'number' && Number.isSafeInteger(value)))
  return fits ? `Literal[${[...new Set(values.map(pythonLiteral))].join(', ')}]` : undefined
}

function singular(name: string): string {
  if (name.length > 4 && name.endsWith('ies')) return `${name.slice(0, -3)}y`
  if (name.length > 3 && name.endsWith('s') && !name.endsWith('ss')) return name.slice(0, -1)
  return `${name}Item`
}

function union(types: string[]): string[] {
  return [...new Set(types)]
}

function isObject(value: unknown): value is SchemaObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

function decodeSegment(segment: string): string {
  return decodeURIComponent(segment).replaceAll('~1', '/').replaceAll('~0', '~')
}
