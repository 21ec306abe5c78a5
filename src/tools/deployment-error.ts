/**
 * A failure the deployment, not the program, is responsible for. The model could do nothing
 * about it, so the ready tool throws it to its host instead of answering the model with it.
 */
import type { PtcRunResult } from '../seam/types.js'

/** Failure kinds that say the deployment cannot give what it promised. */
const DEPLOYMENT_FAILURES = new Set(['sandbox-unavailable'])

/**
 * Thrown by the ready tool (`execute`, `run`, `resume`, and the AI SDK tool) when a run failed
 * because of the deployment: its confinement could not be set up (`sandbox-unavailable`: the
 * message says what to install or configure). `result` is the run's result.
 */
export class PtcDeploymentError extends Error {
  /** Always `PtcDeploymentError`. */
  override readonly name = 'PtcDeploymentError'

  constructor(
    /** The run's result; `result.error` is the failure. */
    readonly result: PtcRunResult,
  ) {
    super(result.error?.message ?? 'the deployment failed the run')
  }
}

/** Throws a `PtcDeploymentError` when `result` failed because of the deployment. */
export function throwIfDeploymentFailure(result: PtcRunResult): void {
  if (result.error !== undefined && DEPLOYMENT_FAILURES.has(result.error.kind)) throw new PtcDeploymentError(result)
}
