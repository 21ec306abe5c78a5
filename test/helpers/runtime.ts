import { Context } from 'cordis'
import { type PtcRunRequest, WorkerPtcRuntime, type WorkerPtcRuntimeOptions } from 'ptc-runtime'

export type RunOptions = Partial<PtcRunRequest>

/** The sandbox facts of every result under the default confinement (no `sandbox` configured). */
export const CONFINED = { mode: 'workspace-write', network: 'none', denied: false, enforcement: 'full' } as const

/** A real Cordis context with a WorkerPtcRuntime plugged in, and a one-line `run`. */
export async function startRuntime(config: WorkerPtcRuntimeOptions = {}) {
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
