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
 * Patterns (`pattern`, under `propertyNames` too, and the keys of `patternProperties`) run on
 * RE2 (re2js), through Ajv's `code.regExp`, never on V8's backtracking engine: a program chooses
 * the strings they are matched against, and a pattern such as `^(\w+\s?)*$` takes exponential
 * time on a backtracking engine. Each pattern is rewritten to mean what ECMAScript means
 * (`patterns.ts`), and one the linear-time engine cannot run is refused when the group is
 * defined, naming the tool and the pattern. `format` runs no pattern: it is an annotation here
 * (see OPTIONS).
 *
 * Linear is not free: RE2 takes about 30 ns a character and a microsecond a match, and one
 * 16 MB string held the host's thread 0.4 to 0.8 s, 3.9 million short ones 1.4 s. So a pattern
 * runs on at most MAX_PATTERN_INPUT characters, and one argument's matches on MAX_PATTERN_WORK
 * in all; past either the call is refused, saying which bound and how to fit it. Ajv's
 * `uniqueItems` is replaced, as it compared every pair of items (`unique-items.ts`). And a check
 * that may take long has a deadline, and a run's checks a budget in all (`check-deadline.ts`).
 */
import { createRequire } from 'node:module'
import type { ErrorObject, FuncKeywordDefinition, ValidateFunction } from 'ajv'
import { PtcCallRefusal } from '../seam/refusal.js'
import type { PtcRunLedger } from '../seam/types.js'
import { type CheckAllowance, alwaysWatched, deadlineRefusal, withinDeadline } from './check-deadline.js'
import { UnsupportedPattern, patternsOf, toLinearPattern } from './patterns.js'
import type { JsonSchema } from './schema-types.js'
import { MAX_UNIQUE_TEXT, UNIQUE_ITEMS, UniqueItemsBound, startUniqueItems } from './unique-items.js'

interface AjvInstance {
  compile(schema: object | boolean): ValidateFunction
  removeKeyword(keyword: string): AjvInstance
  addKeyword(definition: FuncKeywordDefinition): AjvInstance
}
type AjvClass = new (options: object) => AjvInstance

const load = createRequire(import.meta.url)
let re2js: typeof import('re2js') | undefined
/** RE2, loaded with Ajv at the first compile. */
const re2 = () => (re2js ??= load('re2js') as typeof import('re2js'))

/**
/** The longest string or property name a pattern is matched against: about 10 ms of RE2. */
const MAX_PATTERN_INPUT = 262_144
/** The characters one argument's matches may take in all (about 50 ms), each match also counting MATCH_COST. */
const MAX_PATTERN_WORK = 1_048_576
/** What a match costs besides its characters, in characters: a short string costs RE2 a microsecond. */
const MATCH_COST = 32

/**
 * Thrown out of Ajv's validation, which stops there: a pattern was about to run on a string
 * over MAX_PATTERN_INPUT (`input`), or past the argument's MAX_PATTERN_WORK (no `input`).
 */
class PatternBound extends Error {
  constructor(
    readonly pattern: string,
    readonly input?: string,
  ) {
    super('a pattern bound was reached')
  }
}

/** What the argument being checked may still spend on matches; validation is synchronous, so one will do. */
let patternWorkLeft = MAX_PATTERN_WORK

/**
 * Ajv's `code.regExp`: a pattern compiled by RE2 after its rewrite. Ajv passes the `u` flag
 * (`unicodeRegExp`), which RE2 needs no flag for: it always reads code points.
 */
const linearPattern = Object.assign(
  (pattern: string, flags: string) => {
    if (flags !== 'u' && flags !== '') throw new UnsupportedPattern(`the flags "${flags}" are not supported`)
    const compiled = re2().RE2JS.compile(toLinearPattern(pattern))
    const test = (input: string) => {
      if (input.length > MAX_PATTERN_INPUT) throw new PatternBound(pattern, input)
      patternWorkLeft -= input.length + MATCH_COST
      if (patternWorkLeft < 0) throw new PatternBound(pattern)
      return compiled.test(input)
    }
    // Ajv keys its compiled patterns by `toString()`: without one, every pattern shares a key.
    return { test, toString: () => `/${pattern}/${flags}` }
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
    draft7: linearAjv(load('ajv') as { default: AjvClass }),
    draft2020: linearAjv(load('ajv/dist/2020') as { default: AjvClass }),
  }
  // Draft 7 and earlier read `items: [...]` as a tuple, which 2020-12 spells `prefixItems`.
  const dialect = typeof schema === 'object' ? schema.$schema : undefined
  return typeof dialect === 'string' && /draft-0[4-7]/.test(dialect) ? validators.draft7 : validators.draft2020
}

function linearAjv(module: { default: AjvClass }): AjvInstance {
  return new module.default(OPTIONS).removeKeyword('uniqueItems').addKeyword(UNIQUE_ITEMS)
}

/** What a check knows of its call: the argument's size as the host read it, and its run's ledger (none outside a run). */
export interface CheckedCall {
  readonly argumentBytes: number
  readonly ledger: PtcRunLedger | undefined
}

/**
 * A check of `label`'s argument against `schema`, compiled at its first use. It throws a
 * `PtcCallRefusal` naming the tool, the JSON path of the first error and the rule, and returns
 * nothing when the argument fits. Every check is charged to its run, which may spend
 * `runCheckMs` on checks in all; past that they are refused without running. A
 * pattern the linear-time engine cannot run is refused here, when the group is defined (a
 * `TypeError` naming the tool, the pattern and where it is). A
 * schema Ajv cannot compile for another reason (one only the declaration generator
 * understands) leaves the tool unchecked, as before validation existed; one whose pattern RE2
 * cannot compile refuses every call instead, naming why.
 */
export function argumentCheck(label: string, schema: JsonSchema, runCheckMs: number): (args: unknown, call: CheckedCall) => void {
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
  const watch = alwaysWatched(schema)
  return (args, { argumentBytes, ledger }) => {
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
    if (validate === null || fits(label, validate, value, watch, argumentBytes, { ledger, limitMs: runCheckMs })) return
    throw new PtcCallRefusal(`${label}: invalid arguments: ${errorText(validate.errors?.[0], value)}`)
  }
}

/** Whether `value` fits, each argument with the whole of every bound; a bound reached refuses the call. */
function fits(label: string, validate: ValidateFunction, value: unknown, watch: boolean, argumentBytes: number, allowance: CheckAllowance): boolean {
  patternWorkLeft = MAX_PATTERN_WORK
  startUniqueItems()
  try {
    return withinDeadline(watch, argumentBytes, allowance, () => validate(value) as boolean)
  } catch (error) {
    const refusal = deadlineRefusal(label, error)
    if (refusal !== undefined) throw refusal
    if (error instanceof PatternBound) throw new PtcCallRefusal(`${label}: invalid arguments: ${boundText(error, value)}`)
    if (error instanceof UniqueItemsBound) {
      const path = pathOf(segmentsOf(error.instancePath), value)
      throw new PtcCallRefusal(`${label}: invalid arguments: ${path} is too large to check for duplicate items (uniqueItems): an argument's arrays are compared on at most ${MAX_UNIQUE_TEXT} characters of JSON; pass fewer or smaller items in one call`)
    }
    // Ajv checks a recursive schema by recursing: an argument deep enough overflows the stack.
    if (error instanceof RangeError) throw new PtcCallRefusal(`${label}: invalid arguments: the input schema could not check them (${error.message}); pass a smaller or shallower argument`)
    throw error
  }
}

/** Which pattern bound `bound` is and where, so the model can fit its call within it. */
function boundText({ pattern, input }: PatternBound, value: unknown): string {
  if (input === undefined) {
    return `matching its strings against the input schema's patterns takes over ${MAX_PATTERN_WORK} characters of matching (each string counts its length plus ${MATCH_COST}); pass fewer or shorter strings in one call`
  }
  const over = `has ${input.length} characters, over the ${MAX_PATTERN_INPUT} a pattern is matched against (pattern ${JSON.stringify(pattern)})`
  const where = whereIs(input, value)
  // A name this long is never printed: the path of its object says enough.
  if (where?.key === true) return `a property name of ${pathOf(where.segments, value)} ${over}; pass a shorter name`
  return `${where ? pathOf(where.segments, value) : 'a string'} ${over}; pass a shorter string`
}

/** Where the walk of `whereIs` stands in an array or object. */
interface Open {
  readonly container: object
  /** The object's keys; `undefined` for an array. */
  readonly keys: string[] | undefined
  at: number
}

const segmentOf = ({ keys, at }: Open) => (keys === undefined ? String(at - 1) : keys[at - 1]!)

/**
 * Where `text` is in `root`: the path of the first string equal to it, or of the object with a
 * property named so (`key`). Iterative, as arguments may nest past any stack, and holding only
 * the containers open on the way; only a refusal walks the argument.
 */
function whereIs(text: string, root: unknown): { segments: string[]; key: boolean } | undefined {
  if (root === text) return { segments: [], key: false }
  const open: Open[] = []
  let next = root
  for (;;) {
    if (typeof next === 'object' && next !== null) {
      const keys = Array.isArray(next) ? undefined : Object.keys(next)
      if (keys?.includes(text)) return { segments: open.map(segmentOf), key: true }
      open.push({ container: next, keys, at: 0 })
    }
    for (;;) {
      const top = open.at(-1)
      if (top === undefined) return undefined
      const { container, keys } = top
      if (top.at === (keys ?? (container as unknown[])).length) {
        open.pop()
        continue
      }
      next = keys === undefined ? (container as unknown[])[top.at++] : (container as Record<string, unknown>)[keys[top.at++]!]
      break
    }
    if (next === text) return { segments: open.map(segmentOf), key: false }
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
  const segments = segmentsOf(error.instancePath)
  const params = error.params as Record<string, unknown>
  if (error.keyword === 'required') return `${pathOf([...segments, String(params.missingProperty)], value)} is required`
  if (error.keyword === 'additionalProperties') {
    return `${pathOf([...segments, String(params.additionalProperty)], value)} is not allowed (no such property)`
  }
  let rule = error.message ?? `fails "${error.keyword}"`
  if (error.keyword === 'enum' && Array.isArray(params.allowedValues)) rule = `must be one of ${params.allowedValues.map((item) => JSON.stringify(item)).join(', ')}`
  return `${pathOf(segments, value)} ${rule}`
}

/** The segments of Ajv's `instancePath`, a JSON pointer. */
function segmentsOf(instancePath: string): string[] {
  return instancePath === '' ? [] : instancePath.slice(1).split('/').map((part) => part.replaceAll('~1', '/').replaceAll('~0', '~'))
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
