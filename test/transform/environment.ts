/**
 * A test environment for lowered programs: one vm context (the global object of one retained
 * environment), one ProgramState, and evaluation exactly as the worker does it.
 */
import vm from 'node:vm'
import type { PtcProgramFormat } from '../../src/seam/types.js'
import {
  createProgramHooks, createProgramState, lowerProgram, PositionMap, mapStackPositions,
  type LoweredProgram, type ProgramState,
} from '../../src/transform/index.js'

export class TestEnvironment {
  readonly context = vm.createContext({})
  readonly global: Record<string, unknown> = vm.runInContext('globalThis', this.context)
  readonly state: ProgramState = createProgramState(this.global)
  /** scoped-repl: every name earlier runs declared, as the host tracks it. */
  carried: string[] = []

  constructor(readonly format: PtcProgramFormat) {}

  lower(source: string): LoweredProgram {
    const lowered = lowerProgram(source, this.format, { carried: this.carried })
    if (this.format === 'scoped-repl') this.carried = [...new Set([...this.carried, ...lowered.declared])]
    return lowered
  }

  /** Lower and run `source`; resolves to its completion value. */
  async run(source: string): Promise<unknown> {
    const lowered = this.lower(source)
    const entry = new vm.Script(lowered.code, {
      filename: 'program.js',
      importModuleDynamically: vm.constants.USE_MAIN_CONTEXT_DEFAULT_LOADER,
    }).runInContext(this.context) as (hooks: unknown) => Promise<unknown>
    return await entry(createProgramHooks(this.state))
  }

  /** Run `source` expecting it to throw; returns the error with its stack mapped back. */
  async fail(source: string): Promise<{ error: Error & Record<string, unknown>; stack: string }> {
    const lowered = this.lower(source)
    const entry = new vm.Script(lowered.code, { filename: 'program.js' }).runInContext(this.context) as (
      hooks: unknown,
    ) => Promise<unknown>
    try {
      await entry(createProgramHooks(this.state))
    } catch (error) {
      const stack = String((error as Error).stack)
      return { error: error as Error & Record<string, unknown>, stack: mapStackPositions(stack, new PositionMap(lowered.positions)) }
    }
    throw new Error(`expected the program to throw:\n${source}`)
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
