/**
 * `uniqueItems` in linear time, in place of Ajv's own keyword. Ajv compares every pair of items
 * with a deep equality when they may be objects or arrays (its `loopN2`): 20 000 small objects
 * held the host's thread five seconds, and its recursive equality ran out of stack on items
 * nested 50 000 deep. Here each item is written once as canonical JSON text, its object keys
 * sorted, and a duplicate is a text seen before: JSON Schema's equality, since key order does not
 * count, arrays are ordered, and `1` and `1.0` are one number by the time they are a value.
 *
 * Linear is still about 40 ns a character of that text, and an argument may hold 16 MB: 400 000
 * small objects held the host's thread 0.9 s. So one argument's checks write at most
 * MAX_UNIQUE_TEXT characters in all, and an array that would take more is refused.
 */
import type { FuncKeywordDefinition, SchemaValidateFunction } from 'ajv'

/** The characters of canonical text one argument's `uniqueItems` checks may write in all: about 50 ms. */
export const MAX_UNIQUE_TEXT = 1_048_576
/** What the argument being checked may still write; validation is synchronous, so one will do. */
let textLeft = MAX_UNIQUE_TEXT

/** Gives the next argument the whole MAX_UNIQUE_TEXT. */
export function startUniqueItems(): void {
  textLeft = MAX_UNIQUE_TEXT
}

/**
 * Thrown out of Ajv's validation, which stops there (a `false` would be read as a mismatch, one
 * `anyOf` or `not` may turn into a pass): the array at `instancePath` took the argument past
 * MAX_UNIQUE_TEXT.
 */
export class UniqueItemsBound extends Error {
  constructor(readonly instancePath: string) {
    super('the uniqueItems bound was reached')
  }
}

/** Where an array or object stands while its members are written. */
interface Open {
  readonly container: Record<string, unknown> | unknown[]
  /** The object's keys, sorted; `undefined` for an array. */
  readonly keys: string[] | undefined
  at: number
}

/**
 * `value` as JSON with every object's keys sorted, so two values equal as JSON read the same, or
 * `undefined` once it passes `limit` characters. Iterative: arguments may nest as deeply as the
 * reader takes (frame-bounds.ts), past any stack.
 */
function canonicalText(value: unknown, limit: number): string | undefined {
  const parts: string[] = []
  let length = 0
  const write = (part: string) => {
    parts.push(part)
    length += part.length
  }
  const open: Open[] = []
  let next = value
  for (;;) {
    if (Array.isArray(next)) {
      write('[')
      open.push({ container: next, keys: undefined, at: 0 })
    } else if (typeof next === 'object' && next !== null) {
      const keys = Object.keys(next)
      // Each member writes at least `"":0,`: an object surely over the limit is not sorted.
      if (length + 4 * keys.length > limit) return undefined
      write('{')
      open.push({ container: next as Record<string, unknown>, keys: keys.sort(), at: 0 })
    } else {
      write(JSON.stringify(next))
    }
    if (length > limit) return undefined
    for (;;) {
      const top = open.at(-1)
      if (top === undefined) return parts.join('')
      const { container, keys } = top
      const size = keys === undefined ? (container as unknown[]).length : keys.length
      if (top.at === size) {
        write(keys === undefined ? ']' : '}')
        open.pop()
        continue
      }
      if (top.at > 0) write(',')
      if (keys === undefined) {
        next = (container as unknown[])[top.at++]
      } else {
        const key = keys[top.at++]!
        write(JSON.stringify(key))
        write(':')
        next = (container as Record<string, unknown>)[key]
      }
      break
    }
  }
}

const checkUnique: SchemaValidateFunction = (unique: boolean, items: unknown[], _parentSchema, context) => {
  if (!unique || items.length < 2) return true
  const seen = new Map<string, number>()
  for (let index = 0; index < items.length; index++) {
    const text = canonicalText(items[index], textLeft)
    if (text === undefined) throw new UniqueItemsBound(context?.instancePath ?? '')
    textLeft -= text.length
    const first = seen.get(text)
    if (first === undefined) {
      seen.set(text, index)
      continue
    }
    // Ajv's own wording, so a refusal reads as it did before.
    checkUnique.errors = [{ keyword: 'uniqueItems', params: { i: index, j: first }, message: `must NOT have duplicate items (items ## ${first} and ${index} are identical)` }]
    return false
  }
  return true
}

/** The keyword for `ajv.removeKeyword('uniqueItems').addKeyword(UNIQUE_ITEMS)`. */
export const UNIQUE_ITEMS: FuncKeywordDefinition = { keyword: 'uniqueItems', type: 'array', schemaType: 'boolean', errors: true, validate: checkUnique }
