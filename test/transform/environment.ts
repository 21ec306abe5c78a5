/**
 * A test environment for lowered programs: one vm context (the global object of one retained
 * environment), one ProgramState, and evaluation exactly as the worker does it.
 */
import vm from 'node:vm'
import type { PtcProgramFormat } from '../../src/seam/types.js'
import {
  createProgramHooks, createProgramState, lowerProgram, PositionMap,
  type LoweredProgram, type ProgramState,
} from '../../src/transform/index.js'
import { mapStackPositions } from './stack-text.js'

export class TestEnvironment {
  readonly context = vm.createContext({})
  readonly global: Record<string, unknown> = vm.runInContext(
    // Format stacks as Node does by default in the worker (vitest's own formatter ignores the
    // `//# sourceURL` that names each run).
    'Error.prepareStackTrace = (error, frames) => [String(error), ...frames].join("\\n    at "); globalThis',
    this.context,
  )
  readonly state: ProgramState = createProgramState(this.global)
  /** scoped-repl: every name earlier runs declared, as the host tracks it. */
  carried: string[] = []
  /** Position maps of every run so far, as the worker keeps them. */
  readonly maps: PositionMap[] = []

  constructor(readonly format: PtcProgramFormat) {}

  lower(source: string): LoweredProgram {
    const lowered = lowerProgram(source, this.format, { carried: this.carried })
    if (this.format === 'scoped-repl') this.carried = [...new Set([...this.carried, ...lowered.declared])]
    // The map crosses a MessagePort in the worker: rebuild it from a structured clone.
    this.maps.push(new PositionMap(structuredClone(lowered.positions)))
    return lowered
  }

  /** Lower and run `source` as the worker does; resolves to its completion value. */
  async run(source: string): Promise<unknown> {
    const entry = new vm.Script(this.lower(source).code, {
      filename: 'program.js',
      importModuleDynamically: vm.constants.USE_MAIN_CONTEXT_DEFAULT_LOADER,
    }).runInContext(this.context) as (hooks: unknown) => Promise<unknown>
    return await entry(createProgramHooks(this.state))
  }

  /** Run `source` expecting it to throw; returns the error and its stack mapped back. */
  async fail(source: string): Promise<{ error: Error & Record<string, unknown>; stack: string }> {
    try {
      await this.run(source)
    } catch (error) {
      return { error: error as Error & Record<string, unknown>, stack: this.mapStack(String((error as Error).stack)) }
    }
    throw new Error(`expected the program to throw:\n${source}`)
  }

  /** Map a stack with the latest run's map and the maps of every earlier run. */
  mapStack(stack: string): string {
    return mapStackPositions(stack, this.maps.at(-1)!, this.maps.slice(0, -1))
  }

  /** Evaluate a plain script in the environment's context (to read what a run left). */
  evaluate(source: string): unknown {
    return vm.runInContext(source, this.context)
  }
}

/** Run each source in order in one fresh environment; resolves to the last completion. */
export async function runAll(format: PtcProgramFormat, ...sources: string[]): Promise<unknown> {
  const environment = new TestEnvironment(format)
  let completion: unknown
  for (const source of sources) completion = await environment.run(source)
  return completion
}
