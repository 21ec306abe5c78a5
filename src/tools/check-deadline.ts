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
 *
 * One deadline per check still lets a run make such checks one after another, each holding the
 * host up to CHECK_MS, up to its `maxCalls` (twelve in a row held it 3.1 s), and unwatched checks
 * add up too (120 small arguments against 40 `patternProperties`, 5 ms each, held it 0.7 s in
 * one `Promise.all`). So every check of a run is timed and charged to its ledger
 * (`PtcRunLedger.schemaCheckMs`), against one budget: a watched check is stopped at what is left
 * of it, and once it is spent the run's next check, watched or not, is refused without running.
 */
import { Script, createContext } from 'node:vm'
import { performance } from 'node:perf_hooks'
import { PtcCallRefusal } from '../seam/refusal.js'
import type { PtcRunLedger } from '../seam/types.js'
import { keywordsOf } from './subschemas.js'

/** How long one argument's check may hold the host's thread, in ms. */
export const CHECK_MS = 250
/** How long one run's watched checks may hold the host's thread in all, in ms, unless its group says otherwise: four stopped checks. */
export const RUN_CHECK_MS = 4 * CHECK_MS
/** Arguments of more JSON bytes than this are checked under the deadline, whatever their schema. */
const WATCHED_FROM_BYTES = 16 * 1024
/** Keywords under which a schema may check one value more than once (a union's shapes, a reference's target). */
const RECHECKING = new Set(['anyOf', 'oneOf', 'not', 'if', '$ref', '$dynamicRef', '$recursiveRef'])

/** The check past its own deadline: it was stopped where it was. */
export class CheckDeadline extends Error {}

/** The run's budget of checking was spent, before this check or while it ran (then it was stopped). */
export class RunCheckBudgetSpent extends Error {
  constructor(
    readonly spentMs: number,
    readonly limitMs: number,
  ) {
    super("the run's budget of schema checking is spent")
  }
}

/** What a check may spend of its run's budget: none to charge when a host calls a tool itself. */
export interface CheckAllowance {
  readonly ledger: PtcRunLedger | undefined
  readonly limitMs: number
}

const watched = { context: createContext({}), script: new Script('check()', { filename: 'ptc-runtime:schema-check' }) }

/** Whether every check against `schema` is watched: true when it holds a keyword that may check a value more than once. */
export function alwaysWatched(schema: unknown): boolean {
  for (const { name } of keywordsOf(schema)) if (RECHECKING.has(name)) return true
  return false
}

/**
 * What `check` returns, its time charged to the run; with none of the run's budget left it
 * throws RunCheckBudgetSpent without running. When `watch` or the argument is large, it runs
 * within CHECK_MS and what is left of the run's budget: past its own deadline it throws
 * CheckDeadline, past the run's budget RunCheckBudgetSpent.
 */
export function withinDeadline<T>(watch: boolean, argumentBytes: number, allowance: CheckAllowance, check: () => T): T {
  const { ledger, limitMs } = allowance
  const leftMs = ledger === undefined ? CHECK_MS : limitMs - ledger.schemaCheckMs
  if (leftMs <= 0) throw new RunCheckBudgetSpent(ledger!.schemaCheckMs, limitMs)
  if (!watch && argumentBytes <= WATCHED_FROM_BYTES) return charged(ledger, check)
  const timeout = Math.min(CHECK_MS, Math.ceil(leftMs))
  const started = performance.now()
  watched.context.check = check
  try {
    return watched.script.runInContext(watched.context, { timeout }) as T
  } catch (error) {
    if ((error as { code?: unknown }).code !== 'ERR_SCRIPT_EXECUTION_TIMEOUT') throw error
  } finally {
    watched.context.check = undefined
    if (ledger !== undefined) ledger.schemaCheckMs += performance.now() - started
  }
  // Stopped: by what was left of the run's budget when that was shorter than its own deadline.
  if (ledger !== undefined && timeout < CHECK_MS) throw new RunCheckBudgetSpent(ledger.schemaCheckMs, limitMs)
  throw new CheckDeadline()
}

/** `check`, unwatched (its cost is bounded by its small argument), its time charged to `ledger` when there is one. */
function charged<T>(ledger: PtcRunLedger | undefined, check: () => T): T {
  if (ledger === undefined) return check()
  const started = performance.now()
  try {
    return check()
  } finally {
    ledger.schemaCheckMs += performance.now() - started
  }
}

/** The refusal of `label`'s call whose check `withinDeadline` stopped or refused; undefined for any other error. */
export function deadlineRefusal(label: string, error: unknown): PtcCallRefusal | undefined {
  if (error instanceof CheckDeadline) {
    return new PtcCallRefusal(`${label}: invalid arguments: checking them against the input schema took over ${CHECK_MS} ms, and was stopped; pass fewer or simpler items in one call`)
  }
  if (error instanceof RunCheckBudgetSpent) {
    return new PtcCallRefusal(
      `${label}: checking this run's arguments against input schemas has taken ${Math.round(error.spentMs)} ms of the host's thread, reaching its budget of ${error.limitMs} ms (maxSchemaCheckMsPerRun); pass fewer or simpler items per call, or finish the work in another run`,
    )
  }
  return undefined
}
