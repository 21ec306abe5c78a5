/**
 * JSON Schema → TypeScript type text, for the declarations a model reads. Synchronous and
 * small on purpose: it renders inline types the way a person would write them, gives named
 * types only to `$ref` targets (which is what makes recursion expressible), and prefixes
 * them with the group's global so two groups' declarations never collide.
 *
 * Types describe; they do not validate. What has no TypeScript counterpart (`pattern`,
 * `minimum`, `format`, …) goes into the JSDoc next to the property.
 */
import { docComment } from './doc-comment.js'

/** A JSON Schema (any draft from 4 to 2020-12; `true`/`false` included). */
export type JsonSchema = boolean | { [keyword: string]: unknown }

type SchemaObject = { [keyword: string]: unknown }

const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/
// Names our own type text uses unqualified; a named type must not shadow them.
const TAKEN_NAMES = new Set(['Array', 'Record', 'Promise', 'Image', 'Error', 'Date'])

/** A property or member name as it may appear in a type literal. */
export function propertyKey(name: string): string {
  return IDENTIFIER.test(name) ? name : JSON.stringify(name)
}

/**
 * The named types of one group: every `$ref` target gets one alias, declared once in a
 * namespace named after the group's global (`crm.Order`).
 */
export class NamedTypes {
  private readonly _byTarget = new Map<object, string>()
  private readonly _used = new Set<string>()
  /** Alias declarations in the order they were named, each already indented for the namespace. */
  readonly declarations: string[] = []

  constructor(readonly global: string) {}

  /** The qualified name of `target`, rendering it the first time it is seen. */
  nameOf(target: SchemaObject, suggested: string, render: (schema: JsonSchema) => string): string {
    const known = this._byTarget.get(target)
    if (known) return `${this.global}.${known}`
    let base = pascalCase(suggested)
    if (TAKEN_NAMES.has(base)) base = `${base}Type`
    let name = base
    for (let suffix = 2; this._used.has(name); suffix++) name = `${base}${suffix}`
    this._used.add(name)
    this._byTarget.set(target, name)
    // Named before rendering, so a target that refers to itself finds its own name.
    const text = render(target)
    this.declarations.push(`${docComment(describe(target), '  ')}  type ${name} = ${text}`)
    return `${this.global}.${name}`
  }
}

/** Where a schema sits: the document its `$ref`s resolve against, and names for errors. */
export interface SchemaScope {
  /** The whole schema document (`#` in a `$ref`). */
  root: JsonSchema
  /** Name given to the document itself when a `$ref: "#"` makes it recursive. */
  rootName: string
  /** Where the document came from, for error messages (`tools.find.inputSchema`). */
  label: string
  names: NamedTypes
}

/** The TypeScript type of `schema`, laid out for a position indented by `indent`. */
export function typeText(schema: unknown, scope: SchemaScope, indent: string, at: string): string {
  if (schema === undefined || schema === true) return 'unknown'
  if (schema === false) return 'never'
  if (!isObject(schema)) throw new TypeError(`${scope.label}${at}: a schema must be an object or a boolean`)
  if (typeof schema.$ref === 'string') return refType(schema.$ref, scope, at)

  const parts: string[] = []
  if ('const' in schema) parts.push(literalType(schema.const))
  else if (Array.isArray(schema.enum)) parts.push(schema.enum.length === 0 ? 'never' : unique(schema.enum.map(literalType)).join(' | '))
  else {
    const base = baseType(schema, scope, indent, at)
    if (base !== undefined) parts.push(base)
  }
  for (const keyword of ['anyOf', 'oneOf'] as const) {
    const members = schema[keyword]
    if (!Array.isArray(members)) continue
    const union = unique(members.map((member, index) => typeText(member, scope, indent, `${at}/${keyword}/${index}`)))
    parts.push(union.length === 0 ? 'never' : union.join(' | '))
  }
  if (Array.isArray(schema.allOf)) {
    for (const [index, member] of schema.allOf.entries()) parts.push(typeText(member, scope, indent, `${at}/allOf/${index}`))
  }
  // Constraint-only members (`{ required: [...] }` under `oneOf`) render as `unknown` and add nothing.
  const meaningful = parts.filter((part) => part !== 'unknown')
  let text = meaningful.length === 0 ? 'unknown' : meaningful.length === 1 ? meaningful[0]! : meaningful.map(parenthesized).join(' & ')
  if (schema.nullable === true && text !== 'unknown') text = `${text} | null`
  return text
}

/** The type from `type` (or what `properties`/`items` imply); undefined when nothing constrains it. */
function baseType(schema: SchemaObject, scope: SchemaScope, indent: string, at: string): string | undefined {
  let types: unknown[]
  if (Array.isArray(schema.type)) types = schema.type
  else if (typeof schema.type === 'string') types = [schema.type]
  else if ('properties' in schema || 'additionalProperties' in schema || 'patternProperties' in schema || 'required' in schema) types = ['object']
  else if ('items' in schema || 'prefixItems' in schema) types = ['array']
  else return undefined
  const rendered = types.map((type) => {
    switch (type) {
      case 'string':
        return 'string'
      case 'number':
      case 'integer':
        return 'number'
      case 'boolean':
        return 'boolean'
      case 'null':
        return 'null'
      case 'array':
        return arrayType(schema, scope, indent, at)
      case 'object':
        return objectType(schema, scope, indent, at)
      default:
        return 'unknown'
    }
  })
  return unique(rendered).join(' | ')
}

function objectType(schema: SchemaObject, scope: SchemaScope, indent: string, at: string): string {
  const inner = `${indent}  `
  const properties = isObject(schema.properties) ? schema.properties : {}
  const required = new Set(Array.isArray(schema.required) ? schema.required.filter((key) => typeof key === 'string') : [])
  const lines: string[] = []
  const propertyTypes: string[] = []
  let anyOptional = false
  for (const [key, property] of Object.entries(properties)) {
    const type = typeText(property, scope, inner, `${at}/properties/${pointerSegment(key)}`)
    const optional = !required.has(key)
    anyOptional ||= optional
    propertyTypes.push(type)
    lines.push(`${docComment(describe(property), inner)}${inner}${propertyKey(key)}${optional ? '?' : ''}: ${type}`)
  }
  // A required name without a property schema is still a property the object has.
  for (const key of required) if (!(key in properties)) lines.push(`${inner}${propertyKey(key)}: unknown`)

  const extra: string[] = []
  const additional = schema.additionalProperties
  if (isObject(additional)) extra.push(typeText(additional, scope, inner, `${at}/additionalProperties`))
  else if (additional === true || (additional === undefined && lines.length === 0)) extra.push('unknown')
  if (isObject(schema.patternProperties)) {
    for (const [pattern, property] of Object.entries(schema.patternProperties)) {
      extra.push(typeText(property, scope, inner, `${at}/patternProperties/${pointerSegment(pattern)}`))
    }
  }
  if (extra.length > 0) {
    // TypeScript requires every property to fit the index signature.
    let index = unique(extra)
    if (!index.includes('unknown') && lines.length > 0) {
      const all = unique([...index, ...propertyTypes, ...(anyOptional ? ['undefined'] : [])])
      index = all.some((type) => type.includes('\n')) ? ['unknown'] : all
    }
    lines.push(`${inner}[key: string]: ${index.includes('unknown') ? 'unknown' : index.join(' | ')}`)
  }
  if (lines.length === 0) return 'Record<string, never>'
  return `{\n${lines.join('\n')}\n${indent}}`
}

function arrayType(schema: SchemaObject, scope: SchemaScope, indent: string, at: string): string {
  // Tuples: `prefixItems` (2020-12), or an array-valued `items` (drafts 4 to 2019-09).
  const tuple = Array.isArray(schema.prefixItems) ? 'prefixItems' : Array.isArray(schema.items) ? 'items' : undefined
  if (tuple) {
    const members = schema[tuple] as unknown[]
    const minItems = typeof schema.minItems === 'number' ? schema.minItems : members.length
    const elements = members.map((member, index) => {
      const type = typeText(member, scope, indent, `${at}/${tuple}/${index}`)
      return index < minItems ? type : `${parenthesized(type)}?`
    })
    const rest = tuple === 'prefixItems' ? schema.items : schema.additionalItems
    if (rest !== false) elements.push(`...${listType(typeText(rest, scope, indent, `${at}/${tuple === 'prefixItems' ? 'items' : 'additionalItems'}`))}`)
    return `[${elements.join(', ')}]`
  }
  return listType(typeText(schema.items, scope, indent, `${at}/items`))
}

function listType(element: string): string {
  return /^[\w.]+$/.test(element) ? `${element}[]` : `Array<${element}>`
}

function refType(ref: string, scope: SchemaScope, at: string): string {
  // Only references inside the same document; anything else is typed as `unknown`.
  if (!ref.startsWith('#')) return 'unknown'
  const segments = ref === '#' || ref === '#/' ? [] : ref.slice(ref.startsWith('#/') ? 2 : 1).split('/').map(decodeSegment)
  let target: unknown = scope.root
  for (const segment of segments) {
    target = isObject(target) || Array.isArray(target) ? (target as Record<string, unknown>)[segment] : undefined
    if (target === undefined) throw new TypeError(`${scope.label}${at}: $ref ${JSON.stringify(ref)} does not resolve inside the schema`)
  }
  if (typeof target === 'boolean') return target ? 'unknown' : 'never'
  if (!isObject(target)) {
    throw new TypeError(`${scope.label}${at}: $ref ${JSON.stringify(ref)} does not point at a schema`)
  }
  const suggested = segments.length === 0 ? scope.rootName : segments.at(-1)!
  const pointer = segments.length === 0 ? '' : `/${segments.map(pointerSegment).join('/')}`
  return scope.names.nameOf(target, suggested, (resolved) => typeText(resolved, scope, '  ', pointer))
}

function literalType(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(literalType).join(', ')}]`
  if (isObject(value)) {
    const fields = Object.entries(value).map(([key, field]) => `${propertyKey(key)}: ${literalType(field)}`)
    return fields.length === 0 ? 'Record<string, never>' : `{ ${fields.join('; ')} }`
  }
  return value === undefined ? 'undefined' : JSON.stringify(value)
}

// Keywords worth telling the model that a TypeScript type cannot say.
const ANNOTATIONS = [
  'format', 'pattern', 'minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum', 'multipleOf',
  'minLength', 'maxLength', 'minItems', 'maxItems', 'uniqueItems', 'default', 'examples', 'deprecated',
] as const

/** The JSDoc body for a schema: its description, then its constraints as tags. */
export function describe(schema: unknown): string | undefined {
  if (!isObject(schema)) return undefined
  const lines: string[] = []
  if (typeof schema.description === 'string' && schema.description.trim() !== '') lines.push(schema.description.trim())
  else if (typeof schema.title === 'string' && schema.title.trim() !== '') lines.push(schema.title.trim())
  for (const keyword of ANNOTATIONS) {
    const value = schema[keyword]
    if (value === undefined || value === false) continue
    lines.push(value === true ? `@${keyword}` : `@${keyword} ${typeof value === 'string' && keyword !== 'default' ? value : JSON.stringify(value)}`)
  }
  return lines.length === 0 ? undefined : lines.join('\n')
}

function parenthesized(type: string): string {
  return type.includes('|') || type.includes('&') ? `(${type})` : type
}

function unique(items: string[]): string[] {
  return [...new Set(items)]
}

function isObject(value: unknown): value is SchemaObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

/** `read-file` → `ReadFile`: a name usable as a type or class name. */
export function pascalCase(text: string): string {
  const words = text.split(/[^A-Za-z0-9]+/).filter(Boolean)
  const name = words.map((word) => word[0]!.toUpperCase() + word.slice(1)).join('')
  return name === '' ? 'Type' : /^[0-9]/.test(name) ? `T${name}` : name
}

function decodeSegment(segment: string): string {
  return decodeURIComponent(segment).replaceAll('~1', '/').replaceAll('~0', '~')
}

function pointerSegment(segment: string): string {
  return segment.replaceAll('~', '~0').replaceAll('/', '~1')
}
