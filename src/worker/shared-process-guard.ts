/**
 * What a worker sharing the host's process closes because it reaches into the host itself:
 * the inspector (a session on the main thread evaluates code in the host, and its NodeWorker
 * domain attaches to every other environment's worker), native code (`process.dlopen`), Node's
 * raw bindings (`process.binding`, `process._linkedBinding`: internal spawn, fs and inspector
 * routes) and signals to any thread of the host. Each refusal names
 * `isolation: 'process'`, under which a program has a process of its own and none of this
 * reaches the host.
 *
 * This is not a boundary. A worker thread shares the host's memory (`/proc/self/mem`), its
 * descriptors and its environment block (`/proc/self/environ`), which no patch takes away, and
 * `v8.setFlagsFromString` changes flags of the whole process (refusing it would load node:v8 in
 * every worker, about a millisecond each): the thread host is for trusted programs. Inside a
 * helper process none of this is installed.
 */
import fs from 'node:fs'
import { ErrorOf, NumberOf, create, dataProperty, defineProperty, freeze, ownKeys, realmProcess, uncurryThis, withCode } from './intrinsics.js'

// Captured before the program world wraps fs, and before any program can replace it.
const readDirectory = fs.readdirSync as (path: string) => string[]
const getBuiltinModule = uncurryThis(process.getBuiltinModule)

/** The exception every refusal throws. */
export function refusal(what: string): Error {
  return withCode(
    new ErrorOf(`${what} is not available to programs that share the runtime's host process; run such programs with isolation: 'process'`),
    'ERR_ACCESS_DENIED',
  )
}

/** Whether `id` names a thread of this process (read now: threads come and go). */
export function isHostThread(id: number): boolean {
  let threads: string[]
  try {
    threads = readDirectory('/proc/self/task')
  } catch {
    return false // no procfs: the pid checks still apply
  }
  for (let index = 0; index < threads.length; index++) if (NumberOf(threads[index]) === id) return true
  return false
}

/**
 * Every export of a built-in module becomes an accessor that throws: `import()` of it fails
 * (the ES module facade reads every export), and so does any use through `require`,
 * `module.createRequire` or `process.getBuiltinModule`, which all share this one object.
 */
function refuseModule(name: string): void {
  const exports = getBuiltinModule(realmProcess, name) as Record<PropertyKey, unknown>
  const refuse = () => {
    throw refusal(name)
  }
  const keys = ownKeys(exports)
  for (let index = 0; index < keys.length; index++) {
    const accessor = create(null) as PropertyDescriptor
    accessor.get = refuse
    accessor.set = refuse
    accessor.enumerable = true
    accessor.configurable = false
    defineProperty(exports, keys[index]!, accessor)
  }
}

function refuseMethod(target: object, name: string, what: string): void {
  if (typeof (target as Record<string, unknown>)[name] !== 'function') return
  const refuse = function () {
    throw refusal(what)
  }
  // Enumerable, as the original was: an ES module facade exports only enumerable properties.
  defineProperty(target, name, dataProperty(refuse, true, false, false))
}

/** Installs every refusal. Call after the spawn bindings are wrapped (they need process.binding). */
export function closeHostReach(): void {
  // node:inspector/promises is left unloaded (it costs startup time): loading it reads
  // inspector's Session, so it fails with this refusal every time it is attempted.
  refuseModule('node:inspector')
  // Pyodide reads the open flags from binding('constants'): the same numbers fs.constants has.
  const constants = freeze({ fs: freeze({ ...fs.constants }) })
  defineProperty(realmProcess, 'binding', dataProperty(function binding(name: unknown) {
    if (name === 'constants') return constants
    throw refusal('process.binding()')
  }, true, false, false))
  refuseMethod(realmProcess, '_linkedBinding', 'process._linkedBinding()')
  refuseMethod(realmProcess, 'dlopen', 'process.dlopen() (native addons)')
  refuseMethod(realmProcess, '_debugProcess', 'process._debugProcess()')
  refuseMethod(realmProcess, '_debugEnd', 'process._debugEnd()')
}
