/**
 * One run on one environment, from the moment it has an environment to its settlement. It
 * waits for the environment to be ready, sends the program, serves its binding calls and
 * output, and settles exactly once, on whichever comes first: the worker's terminal message,
 * the deadline, the caller's abort, the worker's exit, a protocol violation or the output cap.
 * It ends in one disposition for the environment and, when state was lost, the notice the
 * owner's next run prints. It never asks which host the environment lives on.
 */
import type { NamespaceShape, ProgramCode, RunMessage, WorkerMessage } from '../../protocol/messages.js'
import type { PtcBindingErrorReport, PtcBindingNamespace, PtcCallRecord, PtcRunFailure, PtcRunResult } from '../../seam/types.js'
import { type CallHost, CallDispatcher } from './calls.js'
import { EGRESS_GLOBAL } from '../egress/broker.js'
import type { Environment, EnvironmentHistory, EnvironmentListener } from '../environments/environment.js'
import { OutputLedger } from './output-ledger.js'
import { abortMessage } from './foreign-message.js'
import type { RunTelemetry } from './telemetry.js'
import { TimeBudget } from './time-budget.js'
import { HoldQueue, type SessionPause } from './holds.js'
import { verdictOf } from './endings.js'
import type { CallJournal } from '../durable/journal.js'

/** The least a run waits for its environment's start, however short its budget (see `runSession`). */
const START_WAIT_FLOOR_MS = 10_000

export interface RunPlan {
  program: ProgramCode
  initializer?: ProgramCode
  bindings: readonly PtcBindingNamespace[]
  cwd: string
  timeoutMs: number | null
  signal: AbortSignal
  discardCompletion: boolean
  maxOutputBytes: number
  maxPendingCalls: number
  maxPendingCallBytes: number
  /** Binding calls the run may start. */
  maxCalls: number
  /** JSON bytes one binding call may resolve. */
  maxCallResultBytes: number
  /** A first text line for the output (the notice that earlier state was lost). */
  notice?: string
  /** No run follows in this environment (see `RunMessage.oneShot`). */
  oneShot: boolean
  /** `PtcRunRequest.onBindingError`. */
  onBindingError?: ((report: PtcBindingErrorReport) => void) | undefined
  /** Raises a held call to whoever answers the run; without it, holds are refused. */
  pause?: (pause: SessionPause) => void
  /** Starts the run's span (telemetry.ts `runTelemetry`); absent where OpenTelemetry is not installed. */
  telemetry?: () => RunTelemetry | undefined
  /**
   * A durable run's journal (`pause: 'durable'`): it records the run's calls and the values its
   * clocks and randomness answered, and, for a resumed run, replays the recorded ones first.
   * While the replay has not reached the held call, what the program prints is not reported
   * again.
   */
  journal?: CallJournal
}

/**
 * What happens to the environment: `keep` it for the owner's next run, `discard` it before the
 * result is returned (the program may still be running), or discard it after the result (the
 * worker ended the run itself and is ending its own thread: nothing of the program runs).
 */
export type Disposition = 'keep' | 'discard' | 'discard-after-result'

export interface Settlement {
  result: PtcRunResult
  disposition: Disposition
  /** When the owner's state was lost with the environment: the line its next run prints. */
  notice?: string
  /**
   * The environment ended before the run's code started (a pooled or kept helper that died):
   * nothing of the program ran, and the caller may run it once more in a fresh environment.
   */
  unstarted?: true
}

let runCounter = 0

/** How an allocation the memory budget refused surfaces inside the program (Node 24 words a refused `Buffer` "Failed to allocate memory"). */
const OUT_OF_MEMORY = /^RangeError: (Array buffer allocation failed|Failed to allocate memory|WebAssembly\.Memory\.grow\(\): (Maximum memory size exceeded|Unable to grow instance memory)|Out of memory)|^(RangeError|Error): .*Cannot allocate Wasm memory/
/** Longer than any of those lines; a forged message may be a frame's worth of lines. */
const MEMORY_LINE_CHARS = 256

/** The first line of `message`, within MEMORY_LINE_CHARS: read without going through the rest. */
function firstLine(message: string): string {
  const head = message.slice(0, MEMORY_LINE_CHARS)
  const end = head.indexOf('\n')
  return end === -1 ? head : head.slice(0, end)
}


/**
 * Tells the developer about a binding that failed on the host side: through the request's hook,
 * or, for a value the program cannot receive (a host bug), as a process warning. The hook's own
 * failure must not disturb the run, which has its own outcome to report.
 */
function reportBindingError(hook: RunPlan['onBindingError'], report: PtcBindingErrorReport): void {
  if (hook) {
    // Ignored, as documented on PtcRunRequest.onBindingError, whether it throws or rejects.
    try {
      const returned: unknown = hook(report)
      if (returned instanceof Promise) returned.catch(() => {})
    } catch {}
  } else if (report.kind === 'invalid-value') {
    process.emitWarning(report.message, { code: 'PTC_INVALID_TOOL_VALUE' })
  }
}

/**
 * Runs `plan` on `environment`, whose history the caller hands over with it. Never rejects. What
 * the run needs is made as it needs it: the output ledger at its first output, the budget and the
 * calls as the program is sent, the queue of holds at the first hold.
 */
export function runSession(environment: Environment, history: EnvironmentHistory, plan: RunPlan): Promise<Settlement> {
  return new Promise((resolve) => {
    const run = ++runCounter
    let ledger: OutputLedger | undefined
    const output = (): OutputLedger => (ledger ??= new OutputLedger(plan.maxOutputBytes))
    if (plan.notice) output().text(plan.notice)
    let settled = false
    /** The program was sent; before that, a failure lost nothing and the program never ran. */
    let sent = false
    /** The worker said the run's code is starting; before that, none of it ran. */
    let started = false
    /** The environment ended (or never started) before the run's code started. */
    let endedUnstarted = false
    /** The environment refused the run before any of it reached the worker, and is as it was. */
    let refused = false
    /** This run carried the environment initializer, and the initializer failed. */
    let initializing = false
    let initializerFailed = false
    /** The worker says its environment cannot serve another run. */
    let unusable = false
    /** The worker ended the run itself (done or failed); otherwise it may still be running. */
    let byWorker = false
    /** From the program's send (the budget is the program's, so a slow start does not eat it). */
    let budget: TimeBudget | undefined
    /** Until the environment is ready: how long the run waits for it. */
    let waiting: NodeJS.Timeout | undefined
    /** From the first hold. */
    let holds: HoldQueue | undefined
    const telemetry = plan.telemetry?.()
    /** From the program's send: call offsets in the trace count from there. */
    let calls: CallDispatcher | undefined
    const callHost: CallHost = {
      environment,
      violation: (reason) => fail('protocol', `the program broke the runtime protocol: ${reason}`),
      issued: (attachment) => history.issuedImages.set(attachment.attachmentId, attachment),
      failed: (report) => reportBindingError(plan.onBindingError, report),
      hold: (tool, args, payload, id) => {
        if (!plan.pause) return Promise.reject(new Error(`${tool} cannot be held: this runtime does not hold calls`))
        holds ??= new HoldQueue({
          budget: budget!,
          pause: (pause) => plan.pause?.(pause),
          takeOutput: () => output().take(),
          settledCalls: (): PtcCallRecord[] => calls!.settled(),
          expire: (message) => fail('timeout', message),
          refuse: (message) => fail('exception', message),
        })
        return holds.hold(tool, args, payload, id)
      },
      end: (message) => fail('exception', message),
    }

    const onAbort = () => fail('abort', abortMessage(plan.signal.reason))

    function settle(outcome: Parameters<OutputLedger['finish']>[0]): void {
      if (settled) return
      settled = true
      clearTimeout(waiting)
      budget?.stop()
      holds?.close()
      plan.signal.removeEventListener('abort', onAbort)
      environment.attach(undefined)
      // A call still running when the program completed is one it never awaited.
      const completed = byWorker && !('error' in outcome)
      calls?.close(completed ? 'the program completed without awaiting this call' : 'the run ended before this call settled')
      // Not through `output()`: the ledger's finish follows the calls' trace in one step.
      const result = (ledger ??= new OutputLedger(plan.maxOutputBytes)).finish(outcome, calls?.trace())
      telemetry?.end(result)
      const verdict = verdictOf({
        kind: result.error?.kind,
        sent,
        endedUnstarted,
        refused,
        runs: history.runs,
        initializerFailed,
        unusable,
        alive: environment.alive,
        byWorker,
        oneShot: plan.oneShot,
      })
      if (verdict.kind === 'refused') return resolve({ result, disposition: plan.oneShot ? 'discard-after-result' : 'keep' })
      const notice = verdict.kind === 'tidy' || verdict.notice === undefined ? {} : { notice: verdict.notice }
      if (verdict.kind === 'unstarted') return resolve({ result, disposition: 'discard', unstarted: true, ...notice })
      if (verdict.kind === 'discard') {
        const discard = () => resolve({ result, disposition: 'discard', ...notice })
        // Where disposal itself searches, the run's result waits for that one search only.
        const search = verdict.search && !environment.disposalSearches
        return void (search ? environment.tidy(true).then(discard, discard) : discard())
      }
      void environment.tidy(verdict.thorough).then((clean) => resolve({ result, ...(clean ? verdict.clean : verdict.unclean) }))
    }

    function fail(kind: PtcRunFailure['kind'], message: string): void {
      settle({ error: { kind, message } })
    }

    function handle(message: WorkerMessage): void {
      switch (message.type) {
        case 'output':
          // A replay reprints what the paused answer already reported.
          if (plan.journal?.replaying) return
          for (const item of message.items) {
            if (typeof item === 'string') {
              if (!output().text(item)) return settle({ value: undefined })
              continue
            }
            const attachment = history.issuedImages.get(item.attachmentId)
            if (!attachment) return fail('protocol', `the program broke the runtime protocol: an image that was never issued`)
            if (!output().image(attachment)) return settle({ value: undefined })
          }
          return
        case 'call':
          return calls!.dispatch(message)
        case 'calls':
          for (const call of message.calls) {
            calls!.dispatch(call)
            if (settled) return
          }
          return
        case 'started':
          started = true
          return
        case 'draws':
          if (!plan.journal) return fail('protocol', 'the program broke the runtime protocol: a report of recorded values in a run that records none')
          return plan.journal.draws(message)
        case 'spawned':
          if (!environment.adoptSubprocess(message.pid)) {
            return fail('protocol', 'the program broke the runtime protocol: a subprocess report for a foreign process')
          }
          return
        case 'failed':
          byWorker = true
          if (message.kind === 'exception' && environment.maxMemoryMb !== undefined && OUT_OF_MEMORY.test(firstLine(message.message))) {
            // The kernel refused an allocation and the program did not catch it: name the budget.
            return fail('worker-exit', `the program exceeded its memory budget of ${environment.maxMemoryMb} MiB (maxMemoryMb): ${firstLine(message.message)}`)
          }
          if (message.kind === 'output-limit') output().markOverflow()
          // Only a run that carried the initializer can report its failure.
          if (message.initializer && initializing) initializerFailed = true
          if (message.unusable) unusable = true
          return fail(message.kind, message.message)
        case 'done': {
          byWorker = true
          if (plan.journal?.replaying) return fail('exception', plan.journal.unfinished())
          if (message.value === undefined) return settle({ value: undefined })
          // Read as lossless JSON, within the frame's bounds, as it arrived (json-lines.ts).
          return settle({ value: message.value })
        }
      }
    }

    const listener: EnvironmentListener = {
      run,
      message: handle,
      violation: (reason) => fail('protocol', `the program broke the runtime protocol: ${reason}`),
      forged: () => fail('protocol', 'the program broke the runtime protocol: it posted on a worker channel the runtime does not use'),
      rawOutput(text) {
        if (plan.journal?.replaying) return
        if (!output().text(text)) settle({ value: undefined })
      },
      exit(failure) {
        if (!started && failure.kind === 'worker-exit') endedUnstarted = true
        settle({ error: failure })
      },
      refused(failure) {
        if (started || settled) return
        refused = true
        // Nothing of the run reached the worker: the initializer, if it came with it, comes with the next.
        history.runs--
        settle({ error: failure })
      },
    }

    function start(): void {
      if (settled) return
      clearTimeout(waiting)
      const namespaces = plan.bindings.map(shapeOf)
      // Before the listener: attaching may settle the run at once (its environment ended).
      calls = new CallDispatcher(run, plan.bindings, {
        maxPending: plan.maxPendingCalls,
        maxPendingBytes: plan.maxPendingCallBytes,
        maxCalls: plan.maxCalls,
        maxResultBytes: plan.maxCallResultBytes,
      }, callHost, telemetry, plan.journal)
      environment.attach(listener)
      if (settled) return
      const initializer = history.runs++ === 0 ? plan.initializer : undefined
      initializing = initializer !== undefined
      sent = true
      const message: RunMessage = {
        type: 'run',
        run,
        program: plan.program,
        namespaces,
        cwd: plan.cwd,
        maxOutputBytes: plan.maxOutputBytes,
        maxPendingCallBytes: plan.maxPendingCallBytes,
        discardCompletion: plan.discardCompletion,
        oneShot: plan.oneShot,
        ...(initializer ? { initializer } : {}),
        ...(plan.journal ? { durable: plan.journal.replayDraws } : {}),
      }
      environment.send(message)
      // A refusal settles the run as it is sent.
      if (settled) return
      // The budget is the program's: it starts as the program is sent, so a loaded machine's
      // slow helper start (bounded on its own) does not eat it. Armed after the send, so the
      // environment already has the program while the host does this.
      budget = new TimeBudget(
        plan.timeoutMs,
        () => environment.busyMs(),
        () => fail('timeout', `the program did not finish within its time budget of ${plan.timeoutMs} ms (timeoutMs)`),
      )
      budget.start()
    }

    if (plan.signal.aborted) return onAbort()
    plan.signal.addEventListener('abort', onAbort, { once: true })
    // A start is not charged to the program's budget, but the run waits for it no longer than
    // that budget or START_WAIT_FLOOR_MS, whichever is longer: its caller asked for an answer by
    // then (a silent remote sandbox held a 3 s run for two 60 s starts), and a loaded machine's
    // fresh environment may take seconds to start for a run of a short budget. Not unref'd: the
    // caller's await must keep the process alive.
    const startWaitMs = plan.timeoutMs === null ? undefined : Math.max(plan.timeoutMs, START_WAIT_FLOOR_MS)
    waiting = startWaitMs === undefined ? undefined : setTimeout(() => {
      fail('timeout', `the program did not start: its environment was not ready after ${startWaitMs} ms, the longer of its time budget of ${plan.timeoutMs} ms (timeoutMs) and ${START_WAIT_FLOOR_MS / 1000} s (a start is not charged to the budget, but a run waits for one no longer than that)`)
    }, startWaitMs)
    void environment.ready.then((refusal) => {
      if (!refusal) return start()
      // An environment that could not start (killed while starting, say) ran nothing: the run
      // may be given another. A sandbox that cannot be set up fails the same way again, and
      // that second failure is the result. One that timed out is not waited for twice.
      endedUnstarted = !environment.startTimedOut
      settle({ error: refusal })
    })
  })
}

function shapeOf(namespace: PtcBindingNamespace): NamespaceShape {
  const shape: NamespaceShape = { global: namespace.global, members: Object.keys(namespace.functions) }
  if (namespace.errorClass) {
    shape.errorClass = { name: namespace.errorClass.name, memberNameProperty: namespace.errorClass.memberNameProperty }
  }
  if (namespace.positional === true) shape.positional = true
  // No binding a caller passes may be named `fetch` (a realm built-in): this one is the broker's.
  if (namespace.global === EGRESS_GLOBAL) shape.egress = true
  return shape
}
