/**
 * Finding Pyodide, the optional peer dependency that runs `language: 'python'` programs. The
 * host only resolves its directory and version here; the interpreter itself loads inside each
 * environment's worker (src/worker/python.ts), never on the host's thread, because Pyodide is
 * no sandbox: Python reaches all of Node through its FFI.
 */
import { readFileSync, realpathSync } from 'node:fs'
import { createRequire } from 'node:module'
import path from 'node:path'
import { NAME } from '../host/admission.js'

/** The Pyodide a worker loads: its package directory (real path) and version. */
export interface PythonRuntime {
  directory: string
  version: string
  /** The CPython version it is built from (`3.14.2`), as its lock file records it; what the model is told. */
  python: string
}

/** The major version of Pyodide this runtime is written against (its Python prelude, its FFI). */
const SUPPORTED_MAJOR = '314'

let found: PythonRuntime | undefined

/**
 * Pyodide's manifest, looked up once as this package loads, before any program runs: a `pyodide`
 * a program plants later in a writable `node_modules` on this package's resolution path is never
 * this process's (its snapshot builder would load it in a thread of the host, outside every
 * sandbox). Installing Pyodide takes a restart of the host.
 */
const manifestFile: string | undefined = (() => {
  try {
    return createRequire(import.meta.url).resolve('pyodide/package.json')
  } catch {
    return undefined
  }
})()

/**
 * Pyodide as Node resolved it from this package as it loaded; throws an error naming what to
 * install when it is missing or of another major version. Read once: it does not move while the
 * host runs.
 */
export function pythonRuntime(): PythonRuntime {
  if (found) return found
  if (manifestFile === undefined) {
    throw new Error(`${NAME}: language 'python' needs the optional peer dependency pyodide, which this process did not find as it started: npm install pyodide@^${SUPPORTED_MAJOR}, then restart it`)
  }
  const { version } = JSON.parse(readFileSync(manifestFile, 'utf8')) as { version?: unknown }
  if (typeof version !== 'string' || version.split('.')[0] !== SUPPORTED_MAJOR) {
    throw new Error(`${NAME}: language 'python' needs pyodide ${SUPPORTED_MAJOR}.x, found ${String(version)}: npm install pyodide@^${SUPPORTED_MAJOR}`)
  }
  const directory = realpathSync(path.dirname(manifestFile))
  found = { directory, version, python: pythonVersion(directory) }
  return found
}

/** CPython's version from Pyodide's lock file (`info.python`); `3` when the file does not say. */
function pythonVersion(directory: string): string {
  try {
    const lock = JSON.parse(readFileSync(path.join(directory, 'pyodide-lock.json'), 'utf8')) as { info?: { python?: unknown } }
    const python = lock.info?.python
    if (typeof python === 'string' && /^3\.\d+(\.\d+)?$/.test(python)) return python
  } catch {
    // A missing or unreadable lock file only costs the model the minor version.
  }
  return '3'
}
