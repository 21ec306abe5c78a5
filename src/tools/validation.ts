/**
 * Checking a tool's argument against its `inputSchema` before the tool runs, with Ajv: the
 * JSON Schema validator most of the ecosystem already relies on (the MCP SDK validates with it),
 * covering drafts 7 and 2020-12, which is what tool schemas are written in.
 *
 * Each schema is compiled once, at its tool's first call, not when the group is defined: a
 * compile costs about a millisecond, and a group of 2 000 tools of which a program calls three
 * should not pay two seconds up front. Ajv itself is loaded at the first compile, so a host that
 * never calls a tool never loads it.
 *
 * Patterns (`pattern`, the keys of `patternProperties`) run on RE2 (re2js), through Ajv's
 * `code.regExp`, never on V8's backtracking engine: a program chooses the strings they are
 * matched against, and a pattern such as `^(\w+\s?)*$` takes exponential time on a backtracking
 * engine. Each pattern is rewritten to mean what ECMAScript means (`patterns.ts`), and one the
 * linear-time engine cannot run is refused when the group is defined, naming the tool and the
 * pattern. `format` runs no pattern: it is an annotation here (see OPTIONS).
 */
import { createRequire } from 'node:module'
import type { ErrorObject, ValidateFunction } from 'ajv'
import { PtcCallRefusal } from '../seam/refusal.js'
import { UnsupportedPattern, patternsOf, toLinearPattern } from './patterns.js'
import type { JsonSchema } from './schema-types.js'

interface AjvInstance {
  compile(schema: object | boolean): ValidateFunction
}
type AjvClass = new (options: object) => AjvInstance

const load = createRequire(import.meta.url)
let re2js: typeof import('re2js') | undefined
/** RE2, loaded with Ajv at the first compile. */
const re2 = () => (re2js ??= load('re2js') as typeof import('re2js'))

/**
 * Ajv's `code.regExp`: a pattern compiled by RE2 after its rewrite. Ajv passes the `u` flag
 * (`unicodeRegExp`), which RE2 needs no flag for: it always reads code points.
 */
const linearPattern = Object.assign(
  (pattern: string, flags: string) => {
    if (flags !== 'u' && flags !== '') throw new UnsupportedPattern(`the flags "${flags}" are not supported`)
    const compiled = re2().RE2JS.compile(toLinearPattern(pattern))
    // Ajv keys its compiled patterns by `toString()`: without one, every pattern shares a key.
    return { test: (input: string) => compiled.test(input), toString: () => `/${pattern}/${flags}` }
  },
  { code: 'linearPattern' },
)

// Tool schemas carry keywords of their own (`title`, `examples`, vendor fields) and formats Ajv
// does not know without a plugin: strict mode would refuse them, so it is off, and `format` is
// an annotation. The argument is never changed (no defaults, no coercion): the tool receives
// what the program passed.
const OPTIONS = { strict: false, allErrors: false, validateFormats: false, useDefaults: false, coerceTypes: false, code: { regExp: linearPattern } }

let validators: { draft7: AjvInstance; draft2020: AjvInstance } | undefined

function validatorFor(schema: JsonSchema): AjvInstance {
  validators ??= {
    draft7: new ((load('ajv') as { default: AjvClass }).default)(OPTIONS),
    draft2020: new ((load('ajv/dist/2020') as { default: AjvClass }).default)(OPTIONS),
  }
  // Draft 7 and earlier read `items: [...]` as a tuple, which 2020-12 spells `prefixItems`.
  const dialect = typeof schema === 'object' ? schema.$schema : undefined
  return typeof dialect === 'string' && /draft-0[4-7]/.test(dialect) ? validators.draft7 : validators.draft2020
}

/**
 * A check of `label`'s argument against `schema`, compiled at its first use. It throws a
 * `PtcCallRefusal` naming the tool, the JSON path of the first error and the rule, and returns
 * nothing when the argument fits. A pattern the linear-time engine cannot run is refused here,
 * when the group is defined (a `TypeError` naming the tool, the pattern and where it is). A
 * schema Ajv cannot compile for another reason (one only the declaration generator
 * understands) leaves the tool unchecked, as before validation existed; one whose pattern RE2
 * cannot compile refuses every call instead, naming why.
 */
export function argumentCheck(label: string, schema: JsonSchema): (args: unknown) => void {
  for (const { pattern, path } of patternsOf(schema)) {
    try {
      toLinearPattern(pattern)
    } catch (error) {
      if (!(error instanceof UnsupportedPattern)) throw error
      throw new TypeError(`${label}: the input schema's pattern ${JSON.stringify(pattern)} at ${path} uses ${error.message}; rewrite it without that construct`)
    }
  }
  let validate: ValidateFunction | null | undefined
  // Why calls are refused: a pattern RE2 could not compile is never left unchecked.
  let broken: string | undefined
  return (args) => {
    if (validate === undefined) {
      try {
        validate = validatorFor(schema).compile(compilable(schema))
      } catch (error) {
        validate = null
        if (isPatternError(error)) broken = `${label}: a pattern of its input schema cannot run on the linear-time engine (${(error as Error).message}); the tool takes no call until its schema is fixed`
      }
    }
    if (broken !== undefined) throw new PtcCallRefusal(broken)
    // A call without an argument is checked as `{}`: that is what tools that take none receive.
    const value = args === undefined ? {} : args
    if (validate === null || validate(value)) return
    throw new PtcCallRefusal(`${label}: invalid arguments: ${errorText(validate.errors?.[0], value)}`)
  }
}

/** Whether `error` came from compiling a pattern (ours or RE2's), not from the rest of the schema. */
function isPatternError(error: unknown): boolean {
  return error instanceof UnsupportedPattern || (re2js !== undefined && error instanceof re2js.RE2JSException)
}

/**
 * The schema without `$schema` (the dialect is chosen above, and Ajv refuses meta-schemas it
 * was not given) and without `$id` (two tools sharing an id would collide in one Ajv).
 */
function compilable(schema: JsonSchema): JsonSchema {
  if (typeof schema !== 'object') return schema
  const { $schema: _dialect, $id: _id, ...rest } = schema
  return rest
}

/** `$.items[2].name must be string`, from Ajv's first error. */
function errorText(error: ErrorObject | undefined, value: unknown): string {
  if (error === undefined) return 'they do not match the input schema'
  const segments = error.instancePath === '' ? [] : error.instancePath.slice(1).split('/').map((part) => part.replaceAll('~1', '/').replaceAll('~0', '~'))
  const params = error.params as Record<string, unknown>
  if (error.keyword === 'required') return `${pathOf([...segments, String(params.missingProperty)], value)} is required`
  if (error.keyword === 'additionalProperties') {
    return `${pathOf([...segments, String(params.additionalProperty)], value)} is not allowed (no such property)`
  }
  let rule = error.message ?? `fails "${error.keyword}"`
  if (error.keyword === 'enum' && Array.isArray(params.allowedValues)) rule = `must be one of ${params.allowedValues.map((item) => JSON.stringify(item)).join(', ')}`
  return `${pathOf(segments, value)} ${rule}`
}

/** The path in the notation of every other failure the runtime reports: `$.items[2]["a b"]`. */
function pathOf(segments: readonly string[], root: unknown): string {
  let path = '$'
  let at: unknown = root
  for (const segment of segments) {
    const index = Array.isArray(at) && /^(0|[1-9]\d*)$/.test(segment)
    path += index ? `[${segment}]` : /^[A-Za-z_$][\w$]*$/.test(segment) ? `.${segment}` : `[${JSON.stringify(segment)}]`
    at = typeof at === 'object' && at !== null ? (at as Record<string, unknown>)[segment] : undefined
  }
  return path
}
