/**
 * Loads a `--tools` module and turns its named exports into binding namespaces: an export
 * `weather = { forecast(args) {…} }` becomes the program's global `weather` with the async
 * member `weather.forecast(args)`. An export may also spell out a namespace's error class as
 * `{ functions: {…}, errorClass: { name, memberNameProperty } }`.
 */
import { existsSync } from 'node:fs'
import path from 'node:path'
import { pathToFileURL } from 'node:url'
import { isRecord } from '../json/index.js'
import { validateBindings } from '../seam/names.js'
import type { PtcBindingErrorClass, PtcBindingFunction, PtcBindingNamespace } from '../seam/types.js'
import { UsageError } from './args.js'

type HostFunction = (args: unknown, call: { signal: AbortSignal }) => unknown

/** Imports `specifier` (a path relative to `cwd`) and returns its namespaces in export order. */
export async function loadTools(specifier: string, cwd: string): Promise<PtcBindingNamespace[]> {
  const file = path.resolve(cwd, specifier)
  if (!existsSync(file)) throw new UsageError(`--tools module not found: ${specifier}`)
  let exports: Record<string, unknown>
  try {
    exports = (await import(pathToFileURL(file).href)) as Record<string, unknown>
  } catch (error) {
    throw new UsageError(`--tools module ${specifier} failed to load: ${(error as Error)?.message ?? String(error)}`)
  }
  const bindings = Object.keys(exports)
    .filter((name) => name !== 'default')
    .map((name) => namespaceOf(name, exports[name]))
  try {
    validateBindings(bindings)
  } catch (error) {
    throw new UsageError(`--tools module ${specifier}: ${(error as Error).message}`)
  }
  return bindings
}

function namespaceOf(global: string, value: unknown): PtcBindingNamespace {
  const shape = `--tools export "${global}" must be an object of functions, or { functions, errorClass }`
  if (!isRecord(value)) throw new UsageError(`${shape}; got ${describe(value)}`)
  // The long form is recognisable because in the short form every member is a function.
  if (isRecord(value.functions)) {
    const namespace: PtcBindingNamespace = { global, functions: functionsOf(value.functions, shape) }
    if (value.errorClass !== undefined) namespace.errorClass = value.errorClass as PtcBindingErrorClass
    return namespace
  }
  return { global, functions: functionsOf(value, shape) }
}

function functionsOf(members: Record<string, unknown>, shape: string): Record<string, PtcBindingFunction> {
  const functions: Record<string, PtcBindingFunction> = Object.create(null)
  for (const [name, member] of Object.entries(members)) {
    if (typeof member !== 'function') throw new UsageError(`${shape}; member "${name}" is ${describe(member)}`)
    const fn = member as HostFunction
    // Tool authors may write plain functions: a synchronous result or throw becomes a promise.
    functions[name] = async (args, call) => (await fn.call(members, args, call)) as Awaited<ReturnType<PtcBindingFunction>>
  }
  return functions
}

function describe(value: unknown): string {
  if (value === null) return 'null'
  if (Array.isArray(value)) return 'an array'
  return `a ${typeof value}`
}
