/**
 * A deadline for checking an argument against its schema. Ajv checks on the host's thread, in
 * time that grows with the argument times the schema's work per item (an array of 650 000 items,
 * each an `anyOf` of 128 shapes, held the host's event loop 12.5 s), and a schema that checks a
 * subtree again under each shape of a union, recursively, takes time that doubles with each
 * level: 82 values nested 27 deep took 4.4 s. Such checks run under V8's own watchdog (`vm`'s
 * `timeout`, which stops whatever JavaScript runs on the thread, ours included), so past the
 * deadline the check ends wherever it is and the call is refused. The watchdog's thread costs
 * about 70 µs a call, so a check that can take long only with a large argument (a schema without
 * unions, negations, conditions or references) is watched only when its argument is large.
 */
import { Script, createContext } from 'node:vm'
import { keywordsOf } from './subschemas.js'

/** How long one argument's check may hold the host's thread, in ms. */
export const CHECK_MS = 250
/** Arguments of more JSON bytes than this are checked under the deadline, whatever their schema. */
const WATCHED_FROM_BYTES = 16 * 1024
/** Keywords under which a schema may check one value more than once (a union's shapes, a reference's target). */
const RECHECKING = new Set(['anyOf', 'oneOf', 'not', 'if', '$ref', '$dynamicRef', '$recursiveRef'])

/** The check past its deadline: it was stopped where it was. */
export class CheckDeadline extends Error {}

const watched = { context: createContext({}), script: new Script('check()', { filename: 'ptc-runtime:schema-check' }) }

/** Whether every check against `schema` is watched: true when it holds a keyword that may check a value more than once. */
export function alwaysWatched(schema: unknown): boolean {
  for (const { name } of keywordsOf(schema)) if (RECHECKING.has(name)) return true
  return false
}

/** What `check` returns, within CHECK_MS when `watch` or the argument is large; throws CheckDeadline past it. */
export function withinDeadline<T>(watch: boolean, argumentBytes: number, check: () => T): T {
  if (!watch && argumentBytes <= WATCHED_FROM_BYTES) return check()
  watched.context.check = check
  try {
    return watched.script.runInContext(watched.context, { timeout: CHECK_MS }) as T
  } catch (error) {
    if ((error as { code?: unknown }).code === 'ERR_SCRIPT_EXECUTION_TIMEOUT') throw new CheckDeadline()
    throw error
  } finally {
    watched.context.check = undefined
  }
}
