/**
 * Outcomes of a program, for differential tests of the lowering: its completion, the values of
 * named top-level bindings afterwards, or how it failed, described so that values from another
 * realm compare by content. The reference runs are here too; our side is `TestEnvironment`.
 */
import vm from 'node:vm'
import { ProgramSyntaxError } from '../../src/transform/index.js'
import { TestEnvironment } from './environment.js'

export interface Outcome {
  completion?: unknown
  error?: string
  bindings?: unknown[]
}

function describeValue(value: unknown, depth = 0): unknown {
  if (typeof value === 'function') return `function ${value.name}`
  if (typeof value === 'number' && Object.is(value, -0)) return '-0'
  if (typeof value === 'symbol') return String(value)
  if (typeof value !== 'object' || value === null) return value
  if (depth > 4) return '…'
  if (Array.isArray(value)) return value.map((item) => describeValue(item, depth + 1))
  const entries = Object.entries(value).map(([key, item]) => [key, describeValue(item, depth + 1)])
  return { class: (value as { constructor?: { name?: string } }).constructor?.name ?? null, entries }
}

export function describeError(error: unknown): string {
  // Errors come from other realms, so `instanceof Error` cannot tell them.
  return typeof error === 'object' && error !== null && 'name' in error ? `${String(error.name)}: ${String((error as Error).message)}` : `thrown ${String(error)}`
}

/** The described value of each name, or how reading it threw. */
export function readAll(read: (name: string) => unknown, names: string[]): unknown[] {
  return names.map((name) => {
    try {
      return describeValue(read(name))
    } catch (error) {
      return `throws ${describeError(error)}`
    }
  })
}

/** The reference: the program as a classic script on a fresh context. */
export function asScript(source: string, names: string[]): Outcome {
  let script: vm.Script
  try {
    script = new vm.Script(source)
  } catch (error) {
    return { error: `compile ${(error as Error).name}` }
  }
  const context = vm.createContext({})
  const read = (name: string) => vm.runInContext(name, context)
  try {
    return { completion: describeValue(script.runInContext(context)), bindings: readAll(read, names) }
  } catch (error) {
    return { error: `run ${describeError(error)}`, bindings: readAll(read, names) }
  }
}

/** Our lowering, evaluated as the worker evaluates it. */
export async function lowered(source: string, format: 'script' | 'repl', names: string[]): Promise<Outcome> {
  const environment = new TestEnvironment(format)
  const read = (name: string) => environment.evaluate(name)
  try {
    environment.lower(source)
  } catch (error) {
    if (error instanceof ProgramSyntaxError) return { error: 'compile SyntaxError' }
    throw error
  }
  try {
    return { completion: describeValue(await environment.run(source)), bindings: readAll(read, names) }
  } catch (error) {
    return { error: `run ${describeError(error)}`, bindings: readAll(read, names) }
  }
}
