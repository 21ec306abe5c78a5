/**
 * A deadline for checking a large argument against its schema. Ajv checks on the host's thread,
 * in time that grows with the argument times the schema's work per item: an array of 650 000
 * items, each an `anyOf` of 128 shapes, held the host's event loop 12.5 s. A large argument is
 * checked under V8's own watchdog (`vm`'s `timeout`, which stops whatever JavaScript runs on the
 * thread, ours included), so past the deadline the check ends wherever it is and the call is
 * refused. Small arguments are checked without it: the watchdog's thread costs about 70 µs a
 * call, more than checking them takes.
 */
import { Script, createContext } from 'node:vm'

/** How long one argument's check may hold the host's thread, in ms. */
export const CHECK_MS = 250
/** Arguments of more values than this (a string counting one per KiB besides) are checked under the deadline. */
const TIMED_FROM_VALUES = 1024

/** The check past its deadline: it was stopped where it was. */
export class CheckDeadline extends Error {}

const watched = { context: createContext({}), script: new Script('check()', { filename: 'ptc-runtime:schema-check' }) }

/** What `check` returns, within CHECK_MS when `value` is large; throws CheckDeadline past it. */
export function withinDeadline<T>(value: unknown, check: () => T): T {
  if (!holdsMoreThan(value, TIMED_FROM_VALUES)) return check()
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

/** Whether `value` holds more than `limit` values, counted only until it does. */
function holdsMoreThan(value: unknown, limit: number): boolean {
  const pending = [value]
  let count = 0
  while (pending.length > 0) {
    const next = pending.pop()
    count += typeof next === 'string' ? 1 + (next.length >> 10) : 1
    if (count > limit) return true
    if (typeof next !== 'object' || next === null) continue
    for (const key in next) {
      pending.push((next as Record<string, unknown>)[key])
      if (count + pending.length > limit) return true
    }
  }
  return false
}
