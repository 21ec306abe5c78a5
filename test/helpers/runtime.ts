import { Context } from 'cordis'
import { containerOptions } from './container.js'
import { type PtcRunRequest, type WorkerPtcRuntimeOptions } from 'ptc-runtime'
import { WorkerPtcRuntime } from 'ptc-runtime/cordis'

export type RunOptions = Partial<PtcRunRequest>

/** The sandbox facts of every result under the default confinement (no `sandbox` configured). */
export const CONFINED = { mode: 'workspace-write', network: 'none', denied: false, enforcement: 'full' } as const

/**
 * PTC_TEST_ISOLATION=container runs every runtime that names no tier of its own on the container
 * tier (`npm run test:container`): the suites that hold on every tier prove it there.
 */
export const ON_CONTAINER = process.env.PTC_TEST_ISOLATION === 'container'

async function tierUnderTest(config: WorkerPtcRuntimeOptions): Promise<WorkerPtcRuntimeOptions> {
  if (!ON_CONTAINER || config.isolation !== undefined || config.sandbox !== undefined) return config
  const container = containerOptions()
  if (!container) throw new Error('PTC_TEST_ISOLATION=container, but podman cannot run containers here')
  return { ...config, isolation: 'container', container }
}

/** A real Cordis context with a WorkerPtcRuntime plugged in, and a one-line `run`. */
export async function startRuntime(config: WorkerPtcRuntimeOptions = {}) {
  config = await tierUnderTest(config)
  const root = new Context()
  const fiber = await root.plugin(WorkerPtcRuntime, config)
  const runtime = root.ptcRuntime
  const run = (program: string, options: RunOptions = {}) =>
    runtime.run(runtime.resolve({ program, bindings: [], ...options }))
  return { root, fiber, runtime, run, dispose: () => fiber.dispose() }
}

/** The concatenated text output of a result. */
export function textOf(result: { output: Array<{ type: string; text?: string }> }): string {
  return result.output.map((entry) => entry.text ?? '').join('')
}
