/**
 * When an environment ends, in one place: what a run's end does to the environment it ran in,
 * and the notice an owner's next run prints when its state was lost. The session (`session.ts`)
 * gathers the facts of a run's end and follows the verdict; the owners' queues (`owners.ts`) use
 * the same notices for the losses they see between runs.
 */
import type { PtcFailureKind } from '../../seam/types.js'

/**
 * What each failure kind does to the environment it happened in: `null` keeps it (the program
 * failed, its realm is intact), a reason discards it and says why its state was lost. Every kind
 * has a row, so a new kind does not compile until its row is written.
 */
export const LOST: Record<PtcFailureKind, string | null> = {
  exception: null,
  'invalid-output': null,
  timeout: 'it ran out of time',
  abort: 'it was aborted',
  'worker-exit': 'its worker exited',
  protocol: 'it broke the runtime protocol',
  'output-limit': 'it exceeded the output cap',
  'sandbox-unavailable': 'its sandbox could not be established',
}

/** The notice a run prints when `reason` lost the state earlier runs left. */
export function lostNotice(reason: string): string {
  return `[earlier state was lost because ${reason}; this run starts in a fresh environment]\n`
}

/** The notice of an environment discarded because what its program started would not die. */
export const UNSTOPPED_NOTICE = lostNotice('its subprocesses could not be stopped')
/** The notice of an environment whose worker (or helper) ended between runs or during one. */
export const EXITED_NOTICE = lostNotice(LOST['worker-exit']!)

/** What the session knows about a run when it settles. */
export interface RunEnd {
  /** The failure kind of the result, if it failed. */
  kind: PtcFailureKind | undefined
  /** The program was sent to the environment. */
  sent: boolean
  /** The environment ended (or never started) before the run's code started. */
  endedUnstarted: boolean
  /** The environment refused the run before any of it reached the worker, and is as it was. */
  refused: boolean
  /** Runs started in the environment, this one included once it was sent. */
  runs: number
  /** The environment initializer ran with this run and failed. */
  initializerFailed: boolean
  /** The worker said its environment cannot serve another run. */
  unusable: boolean
  /** The environment can still serve runs (`Environment.alive`). */
  alive: boolean
  /** The worker ended the run itself; otherwise the program may still be running. */
  byWorker: boolean
  /** No run follows in this environment. */
  oneShot: boolean
}

/**
 * The verdict on an environment at a run's end:
 * - `unstarted`: discard it; the run's code never started, so the caller may run it again;
 * - `refused`: the environment refused the run and is as it was: an owner keeps it, state and all;
 * - `discard`: discard it before the result, first searching for what the program started when
 *   `search` (it may still be running);
 * - `tidy`: kill what the program reported starting (`thorough`: search for the rest too),
 *   then end as `clean` says when nothing was left, as `unclean` says otherwise.
 * `notice` is set when state earlier runs left was lost.
 */
export type Verdict =
  | { kind: 'unstarted'; notice?: string }
  | { kind: 'refused' }
  | { kind: 'discard'; search: boolean; notice?: string }
  | { kind: 'tidy'; thorough: boolean; clean: AfterTidy; unclean: AfterTidy }

/** What becomes of an environment after its tidy, and the notice when its state was lost. */
export interface AfterTidy {
  disposition: 'keep' | 'discard' | 'discard-after-result'
  notice?: string
}

export function verdictOf(end: RunEnd): Verdict {
  if (end.refused && end.alive) return { kind: 'refused' }
  if (end.endedUnstarted) {
    // State was lost only if earlier runs left some here (this run's own start counts once it was sent).
    return end.runs > (end.sent ? 1 : 0) ? { kind: 'unstarted', notice: EXITED_NOTICE } : { kind: 'unstarted' }
  }
  const lost = end.kind === undefined ? null : LOST[end.kind]
  const discarded = !end.sent || end.initializerFailed || end.unusable || !end.alive || lost !== null
  // Kept, or ending itself: what the program reported starting dies before the result is returned.
  if (!discarded || (end.oneShot && end.byWorker)) return { kind: 'tidy', thorough: !end.byWorker, clean: afterTidy(true, end.oneShot), unclean: afterTidy(false, end.oneShot) }
  // Nothing was lost when the program never ran here or only the initializer failed.
  const notice = !end.sent || end.initializerFailed ? undefined : lostNotice(lost ?? (end.unusable ? 'its environment became unusable' : 'its environment ended'))
  // The program may still be running, or blocked in a synchronous spawn whose child no report
  // announced: what it started is searched for before the result is returned.
  return { kind: 'discard', search: end.sent && !end.byWorker, ...(notice ? { notice } : {}) }
}

/**
 * After a tidy: a one-shot environment ends after the result (before it, when something would
 * not die); a kept one stays unless something would not die.
 */
function afterTidy(clean: boolean, oneShot: boolean): AfterTidy {
  if (oneShot) return { disposition: clean ? 'discard-after-result' : 'discard' }
  return clean ? { disposition: 'keep' } : { disposition: 'discard', notice: UNSTOPPED_NOTICE }
}
