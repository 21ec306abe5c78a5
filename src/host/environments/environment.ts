/**
 * Environments: where programs run. An environment is one fresh realm running our bootstrap: a
 * worker thread in this process (`thread/environment.ts`), or a helper process of its own behind
 * a tier's pipe (`pipe.ts`: on the process tier the helper's main thread, on the stream and plain
 * tiers a worker the helper starts). It serves one run at a time (several in sequence for one
 * state owner) and is never handed to anybody else. The run session (`run/session.ts`) drives it
 * only through this interface and never asks which tier it is.
 */
import type { HostMessage, WorkerMessage } from '../../protocol/messages.js'
import type { ImageAttachmentRef, PtcRunFailure } from '../../seam/types.js'

/** Receives what an environment reports while it serves a run (through its connection). */
export interface EnvironmentListener {
  /** The run listening: a worker message of any other is a violation. */
  readonly run: number
  /** A worker message of the run, checked field by field and rebuilt. */
  message(message: WorkerMessage): void
  /** A worker message that breaks the protocol, and why. */
  violation(reason: string): void
  /** Traffic on a channel the runtime never uses, or torn framing: forged by the program. */
  forged(): void
  /** Writes that bypassed the patched streams and reached the worker's real stdout/stderr. */
  rawOutput(text: string): void
  /** The worker (or the process hosting it) ended; `failure` says how, for the model. */
  exit(failure: PtcRunFailure): void
  /**
   * The environment refused the run before any of it reached the worker (a cwd the confinement
   * cannot show): it is as it was, its state with it.
   */
  refused(failure: PtcRunFailure): void
}

/** Why a run could not be served: its environment did not start, or refused the run's cwd. */
export type Refusal = PtcRunFailure

export interface Environment {
  /**
   * Resolves `undefined` once the environment can serve a run, or with the failure every run
   * sent to it would get because it never will (it could not start). A run waits for it.
   */
  readonly ready: Promise<Refusal | undefined>
  /** It did not start within its tier's bound: a fresh one would likely wait as long, so a run is not given another. */
  readonly startTimedOut?: boolean
  /** Resolves once the worker and whatever hosts it have exited. */
  readonly exited: Promise<void>
  readonly alive: boolean
  /** The kernel-enforced budget of everything the program allocates, when there is one. */
  readonly maxMemoryMb?: number
  attach(listener: EnvironmentListener | undefined): void
  /** `written`, when given, is called once the message is out of the host's hands. */
  send(message: HostMessage, written?: () => void): void
  /** Records a subprocess a program reported; false when it is someone else's process. */
  adoptSubprocess(pid: number): boolean
  /**
   * After a run whose environment is kept, before its result is returned: kills what the
   * program reported starting and resolves whether the environment is clean. `thorough` also
   * searches for processes nobody reported (the program may have been blocked inside a
   * synchronous spawn). False means discard it.
   */
  tidy(thorough: boolean): Promise<boolean>
  /**
   * After a kept run's result is returned, before the environment serves again: the host's own
   * look for processes the program started without a report, which it kills. Only a program
   * that went around the runtime's spawn hooks (a nested worker, its helper's main thread, native
   * code) has any, and such a program can start more once it is over, so nothing is gained by
   * holding its result for this look. False means discard the environment.
   */
  audit(): Promise<boolean>
  /**
   * How long the environment has been busy, in milliseconds, counted from any fixed point: the
   * CPU time of its processes (the helper and what the program started) on the process host, its
   * worker's event-loop active time plus the CPU time of the subprocesses it reported on the thread
   * host. A held call's run spends its time budget
   * by it (`holds.ts`).
   */
  busyMs(): number
  /** Idle environments must not keep the host process alive. */
  hold(held: boolean): void
  /** Ends the worker and everything the program started; resolves once all of it is gone. */
  dispose(): Promise<void>
  /**
   * Runtime disposal calls it on every environment at once, before awaiting anything: an
   * environment serving a run stops what runs there in one synchronous step, where that is safe
   * without a search (a ready helper's PID namespace is killed whole); an idle one may do
   * nothing. `dispose()` follows and resolves once all is gone.
   */
  end?(): void
  /**
   * Whether `dispose()` finds and kills what the program started, reported or not, by itself (a
   * helper's PID namespace or whole tree): a search before disposing would only repeat it, on
   * the run's time.
   */
  readonly disposalSearches: boolean
}

/**
 * What the runs an environment served leave for its next run: the host's record, kept once for
 * every tier. A fresh environment's is a fresh one: a one-shot run, whose environment serves no
 * other, makes its own instead of looking one up.
 */
export class EnvironmentHistory {
  /** Attachments issued to programs here; only these may be emitted as images. */
  readonly issuedImages = new Map<string, ImageAttachmentRef>()
  /** Top-level names earlier runs left (scoped-repl carries them forward). */
  readonly carried = new Set<string>()
  /** Runs started here; the initializer runs with the first. */
  runs = 0
}

const histories = new WeakMap<Environment, EnvironmentHistory>()

/** The history of `environment` kept for its owner's runs, empty until its first run. */
export function historyOf(environment: Environment): EnvironmentHistory {
  let history = histories.get(environment)
  if (history === undefined) histories.set(environment, (history = new EnvironmentHistory()))
  return history
}
