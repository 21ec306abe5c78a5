/**
 * One run on one environment, settled exactly once by whichever comes first: the worker's
 * terminal message, the deadline, the caller's abort, the worker's exit, a protocol
 * violation or the output cap. Settlement stops replies and in-flight host calls, kills the
 * program's subprocesses and tells the caller whether the environment may be kept.
 */
import { decodeWire } from '../json/index.js'
import type { NamespaceShape, ProgramCode, RunMessage, WorkerMessage } from '../protocol.js'
import type { PtcBindingNamespace, PtcRunFailure, PtcRunResult } from '../seam/types.js'
import { CallDispatcher } from './calls.js'
import type { Environment, EnvironmentListener } from './environment.js'
import { OutputLedger } from './ledger.js'
import { parseWorkerMessage } from './messages.js'

export interface RunPlan {
  program: ProgramCode
  initializer?: ProgramCode
  bindings: readonly PtcBindingNamespace[]
  cwd: string
  timeoutMs: number | null
  signal?: AbortSignal
  discardCompletion: boolean
  maxOutputBytes: number
  maxPendingCalls: number
  /** A first text line for the output (the notice that earlier state was lost). */
  notice?: string
  /** No run follows in this environment (see `RunMessage.oneShot`). */
  oneShot: boolean
}

export interface Settlement {
  result: PtcRunResult
  /** False when the environment must be discarded (its program may still be running). */
  reusable: boolean
  /** The environment initializer failed: the owner's programs never ran there, nothing was lost. */
  initializerFailed: boolean
  /**
   * The one-shot run settled on the worker's own terminal message, right after which the worker
   * ends its thread: no program code runs there any more, so disposal need not delay the result.
   */
  workerEnding: boolean
}

let runCounter = 0

/** Failure kinds after which the environment is discarded. */
const DISCARDING = new Set<PtcRunFailure['kind']>(['timeout', 'abort', 'worker-exit', 'protocol', 'output-limit'])

function reasonText(reason: unknown): string {
  if (reason instanceof Error) return reason.message
  if (reason === undefined) return 'the run was aborted'
  try {
    return String(reason)
  } catch {
    return 'the run was aborted'
  }
}

function exitMessage(code: number, error: Error | undefined): string {
  const errorCode = (error as { code?: string } | undefined)?.code
  if (errorCode === 'ERR_WORKER_OUT_OF_MEMORY') return 'the program ran out of memory and its worker was stopped'
  if (error) return `the program's worker crashed: ${error.message}`
  return `the program ended its worker (exit code ${code}) before completing`
}

/** Executes `plan` on `environment`. Never rejects. */
export function execute(environment: Environment, plan: RunPlan): Promise<Settlement> {
  return new Promise((resolve) => {
    const run = ++runCounter
    const ledger = new OutputLedger(plan.maxOutputBytes)
    if (plan.notice) ledger.text(plan.notice)
    let settled = false
    /** This run carried the environment initializer (its environment is new). */
    let initializing = false
    let initializerFailed = false
    /** The worker says its environment cannot serve another run. */
    let unusable = false
    /** The worker ended the run itself (done or failed); otherwise it may still be running. */
    let byWorker = false
    let timer: NodeJS.Timeout | undefined

    const calls = new CallDispatcher(run, plan.bindings, plan.maxPendingCalls, {
      reply: (message) => environment.send(message),
      violation: (reason) => fail('protocol', `the program broke the runtime protocol: ${reason}`),
      issued: (attachment) => environment.issuedImages.set(attachment.attachmentId, attachment),
    })

    const onAbort = () => fail('abort', reasonText(plan.signal?.reason))

    function settle(outcome: Parameters<OutputLedger['finish']>[0]): void {
      if (settled) return
      settled = true
      if (timer) clearTimeout(timer)
      plan.signal?.removeEventListener('abort', onAbort)
      calls.close()
      environment.attach(undefined)
      const result = ledger.finish(outcome)
      const reusable = environment.alive && !initializerFailed && !unusable && !(result.error && DISCARDING.has(result.error.kind))
      const workerEnding = byWorker && plan.oneShot
      // A worker that did not end the run itself may be blocked inside a synchronous spawn.
      void Promise.resolve(environment.killSubprocesses(!byWorker)).then(() => resolve({ result, reusable, workerEnding, initializerFailed }))
    }

    function fail(kind: PtcRunFailure['kind'], message: string): void {
      settle({ error: { kind, message } })
    }

    function handle(message: WorkerMessage): void {
      switch (message.type) {
        case 'output':
          for (const item of message.items) {
            if (typeof item === 'string') {
              if (!ledger.text(item)) return settle({ value: undefined })
              continue
            }
            const attachment = environment.issuedImages.get(item.attachmentId)
            if (!attachment) return fail('protocol', `the program broke the runtime protocol: an image that was never issued`)
            if (!ledger.image(attachment)) return settle({ value: undefined })
          }
          return
        case 'call':
          return calls.dispatch(message)
        case 'calls':
          for (const call of message.calls) {
            calls.dispatch(call)
            if (settled) return
          }
          return
        case 'spawned':
          if (!environment.adoptSubprocess(message.pid)) {
            return fail('protocol', 'the program broke the runtime protocol: a subprocess report for a foreign process')
          }
          return
        case 'failed':
          byWorker = true
          if (message.kind === 'output-limit') ledger.markOverflow()
          // Only a run that carried the initializer can report its failure.
          if (message.initializer && initializing) initializerFailed = true
          if (message.unusable) unusable = true
          return fail(message.kind, message.message)
        case 'done': {
          byWorker = true
          if (message.value === undefined) return settle({ value: undefined })
          const decoded = decodeWire(message.value)
          if (!decoded.ok) return fail('invalid-output', `the completion value is not lossless JSON: ${decoded.reason}`)
          return settle({ value: decoded.value })
        }
      }
    }

    const listener: EnvironmentListener = {
      message(raw) {
        const parsed = parseWorkerMessage(raw, run)
        if (typeof parsed === 'string') return fail('protocol', `the program broke the runtime protocol: ${parsed}`)
        handle(parsed)
      },
      forged: () => fail('protocol', 'the program broke the runtime protocol: it posted on a worker channel the runtime does not use'),
      rawOutput(text) {
        if (!ledger.text(text)) settle({ value: undefined })
      },
      exit: (code, error) => fail('worker-exit', exitMessage(code, error)),
    }

    if (plan.signal?.aborted) return onAbort()
    plan.signal?.addEventListener('abort', onAbort, { once: true })
    if (plan.timeoutMs !== null) {
      const ms = plan.timeoutMs
      timer = setTimeout(() => fail('timeout', `the program did not finish within its time budget of ${ms} ms (timeoutMs)`), ms)
    }
    environment.attach(listener)
    if (settled) return
    const initializer = environment.runs++ === 0 ? plan.initializer : undefined
    initializing = initializer !== undefined
    const message: RunMessage = {
      type: 'run',
      run,
      program: plan.program,
      namespaces: plan.bindings.map(shapeOf),
      cwd: plan.cwd,
      maxOutputBytes: plan.maxOutputBytes,
      discardCompletion: plan.discardCompletion,
      oneShot: plan.oneShot,
      ...(initializer ? { initializer } : {}),
    }
    environment.send(message)
  })
}

function shapeOf(namespace: PtcBindingNamespace): NamespaceShape {
  const shape: NamespaceShape = { global: namespace.global, members: Object.keys(namespace.functions) }
  if (namespace.errorClass) {
    shape.errorClass = { name: namespace.errorClass.name, memberNameProperty: namespace.errorClass.memberNameProperty }
  }
  return shape
}
