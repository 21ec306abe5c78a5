/**
 * `createPtcRuntime`: the runtime for agent-loop code that has no Cordis app. It makes a Cordis
 * context of its own, plugs `WorkerPtcRuntime` into it and hands back the service and one way
 * to end it, so the caller never imports Cordis.
 */
import { Context } from 'cordis'
import type { PtcRuntime } from '../seam/api.js'
import { asSchemaOptions } from './config.js'
import type { WorkerPtcRuntimeOptions } from './options.js'
import { WorkerPtcRuntime } from './provider.js'

/** A runtime that `createPtcRuntime` started, and the one way to end it. */
export interface StandalonePtcRuntime {
  /** The service, as a Cordis app reaches it at `ctx.ptcRuntime`. Unusable after `dispose`. */
  runtime: PtcRuntime
  /**
   * Aborts every run with "runtime disposed", awaits every worker and helper process, and then
   * resolves. Calling it again (or concurrently) returns the same promise.
   */
  dispose(): Promise<void>
}

/**
 * Starts a `WorkerPtcRuntime` with `config` in a Cordis context owned by the returned handle.
 * Resolves once the runtime is ready; rejects with the plugin's own message when `config` is
 * invalid (`invalid config: …`, `config.cwd must be an absolute path, …`) or start-up fails,
 * leaving nothing running. In a Cordis app, use `ctx.plugin(WorkerPtcRuntime, config)` instead.
 */
export async function createPtcRuntime(config: WorkerPtcRuntimeOptions = {}): Promise<StandalonePtcRuntime> {
  const root = new Context()
  const fiber = root.plugin(WorkerPtcRuntime, asSchemaOptions(config))
  try {
    // Awaiting the fiber is what makes a start-up error a rejection here; Cordis would
    // otherwise only log it and leave `ctx.ptcRuntime` unset.
    await fiber
  } catch (error) {
    await fiber.dispose()
    throw error
  }
  const runtime = root.ptcRuntime
  let disposed: Promise<void> | undefined
  return { runtime, dispose: () => (disposed ??= fiber.dispose()) }
}
