/**
 * The keywords of a schema and of every schema inside it, for the checks made when a group is
 * defined (its patterns, whether its checks are watched). Values that are data, not schemas,
 * are not entered: an `anyOf` or a `pattern` inside a `const` is part of a value the argument is
 * compared with, and counting it would make a check look slower, or a pattern look unsupported,
 * when neither is. The members of a map of schemas by name (`properties`, `$defs`, …) are
 * schemas whatever their names: a property named `const` is walked.
 */

/** Keywords whose values are data, never checked as schemas. */
const DATA_KEYWORDS = new Set(['enum', 'const', 'default', 'examples', 'example'])
/** Keywords whose values map names (of properties, definitions, patterns) to schemas. */
const SCHEMA_MAPS = new Set(['properties', 'patternProperties', '$defs', 'definitions', 'dependentSchemas', 'dependencies'])

/** One keyword of a schema: its name, its value, and where it is (`$.properties.code.pattern`). */
export interface Keyword {
  readonly name: string
  readonly value: unknown
  readonly path: string
}

/** A member's place under `path`, in the notation of the runtime's other paths. */
const memberPath = (path: string, key: string) => (/^[A-Za-z_$][\w$]*$/.test(key) ? `${path}.${key}` : `${path}[${JSON.stringify(key)}]`)

/** Every keyword of `schema` and of the schemas inside it, walked without recursion (a schema may nest deeply). */
export function* keywordsOf(schema: unknown): Generator<Keyword> {
  const stack: { value: unknown; path: string }[] = [{ value: schema, path: '$' }]
  while (stack.length > 0) {
    const { value, path } = stack.pop()!
    if (typeof value !== 'object' || value === null) continue
    if (Array.isArray(value)) {
      value.forEach((item, index) => stack.push({ value: item, path: `${path}[${index}]` }))
      continue
    }
    for (const [name, child] of Object.entries(value)) {
      if (DATA_KEYWORDS.has(name)) continue
      const at = memberPath(path, name)
      yield { name, value: child, path: at }
      if (SCHEMA_MAPS.has(name) && typeof child === 'object' && child !== null && !Array.isArray(child)) {
        for (const [key, member] of Object.entries(child)) stack.push({ value: member, path: memberPath(at, key) })
      } else {
        stack.push({ value: child, path: at })
      }
    }
  }
}
