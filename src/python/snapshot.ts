/**
 * The memory snapshot every Python environment restores instead of booting CPython: made once
 * per host process, in a worker thread that runs no program (Pyodide's `_makeSnapshot`), kept in
 * an unnamed read-only file (src/system/unnamed-file.ts) whose descriptor only the host holds,
 * and checked by its SHA-256. Each environment is handed it as it starts: a worker thread of the
 * host's reads the host's descriptor; a helper process gets it as PYTHON_SNAPSHOT_FD and closes
 * it before any program runs (src/worker/python.ts). No path names it, so no program whose
 * writable root holds the temporary directory can swap it for a link to another file, and a
 * host killed without its `exit` event leaves nothing behind (a named file once did, 31 MB each).
 * Measured before: about 3 s to boot against about 0.33 s to restore, on an idle machine.
 */
import { createHash } from 'node:crypto'
import { Worker } from 'node:worker_threads'
import { PYTHON_SNAPSHOT_FD } from '../protocol/frames.js'
import type { PythonSnapshot } from '../protocol/messages.js'
import { fileIdentity, unnamedCopy } from '../system/unnamed-file.js'
import type { PythonRuntime } from './runtime.js'

/** The builder's code: boot Pyodide with what the prelude imports, then snapshot its memory. */
const BUILDER = `
const { parentPort, workerData } = require('node:worker_threads')
const { createRequire } = require('node:module')
const { loadPyodide } = createRequire(workerData.directory + '/package.json')('./pyodide.js')
loadPyodide({ indexURL: workerData.directory + '/', env: { HOME: '/home/pyodide' }, packages: [], _makeSnapshot: true }).then((pyodide) => {
  pyodide.runPython('import ast, asyncio, builtins, json, math, sys, traceback, types')
  const bytes = pyodide.makeMemorySnapshot()
  parentPort.postMessage({ version: pyodide.version, bytes }, [bytes.buffer])
}, (error) => parentPort.postMessage({ error: String((error && error.stack) || error) }))
`

/** The built snapshot: the host's descriptor of its file, the file's identity, its size, digest and Pyodide's version. */
interface Built {
  descriptor: number
  /** What the descriptor leads to (fileIdentity): the snapshot only while it matches. */
  file: string
  bytes: number
  sha256: string
  version: string
}

let building: Promise<Built | undefined> | undefined
let built: Built | undefined
let pyodideDirectory: string | undefined

/**
 * Builds the snapshot of `runtime`'s Pyodide, on first call; settles once it is built, or could
 * not be (each environment then boots the interpreter itself, slower but the same).
 */
export function pythonSnapshot(runtime: PythonRuntime): Promise<void> {
  pyodideDirectory = runtime.directory
  building ??= build(runtime).then(
    (snapshot) => (built = snapshot),
    () => undefined,
  )
  return building.then(() => undefined)
}

/** The snapshot as a worker thread of this process reads it: at the host's own descriptor. */
export function threadSnapshot(): PythonSnapshot | undefined {
  const snapshot = current()
  return snapshot && handedAs(snapshot, snapshot.descriptor, false)
}

/**
 * The snapshot as a helper process reads it, and the host's descriptor to give it as
 * PYTHON_SNAPSHOT_FD; undefined until it is built.
 */
export function helperPythonSnapshot(): { snapshot: PythonSnapshot; descriptor: number } | undefined {
  const snapshot = current()
  return snapshot && { snapshot: handedAs(snapshot, PYTHON_SNAPSHOT_FD, true), descriptor: snapshot.descriptor }
}

/** `snapshot` as an environment that reads it at `descriptor` is handed it. */
function handedAs({ bytes, sha256, version }: Built, descriptor: number, own: boolean): PythonSnapshot {
  return { descriptor, own, bytes, sha256, version }
}

/**
 * The built snapshot while its descriptor still leads to its file. A thread-tier program (which
 * shares the host's process) can close the descriptor, and the number then goes to whatever the
 * host opens next: handed on, it would give a helper a dup of one of the host's sockets. The
 * snapshot is then forgotten, not closed (the number is no longer the snapshot's).
 */
function current(): Built | undefined {
  if (built && fileIdentity(built.descriptor) !== built.file) built = undefined
  return built
}



/**
 * What a confined helper must be able to read for Python: Pyodide's own directory (the helper
 * shows none of the host's packages otherwise).
 */
export function pyodidePaths(): string[] {
  return pyodideDirectory ? [pyodideDirectory] : []
}

async function build(runtime: PythonRuntime): Promise<Built> {
  const worker = new Worker(BUILDER, { eval: true, env: {}, workerData: { directory: runtime.directory }, stdout: true, stderr: true })
  worker.unref()
  let answer: { version?: string; bytes?: Uint8Array; error?: string }
  try {
    answer = await new Promise((resolve, reject) => {
      worker.once('message', resolve)
      worker.once('error', reject)
      worker.once('exit', (code) => reject(new Error(`the snapshot builder exited with code ${code}`)))
    })
  } finally {
    void worker.terminate()
  }
  if (!answer.bytes || answer.version !== runtime.version) throw new Error(answer.error ?? `snapshot of Pyodide ${answer.version}, expected ${runtime.version}`)
  const descriptor = unnamedCopy(answer.bytes)
  const sha256 = createHash('sha256').update(answer.bytes).digest('hex')
  return { descriptor, file: fileIdentity(descriptor)!, bytes: answer.bytes.length, sha256, version: runtime.version }
}
