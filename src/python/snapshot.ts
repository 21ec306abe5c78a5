/**
 * The memory snapshot every Python environment restores instead of booting CPython: made once
 * per host process, in a worker thread that runs no program (Pyodide's `_makeSnapshot`), written
 * to a private read-only file, and named with its SHA-256. A worker restores it only when the
 * file still has that digest (src/worker/python.ts), so a file changed after it was written is
 * never restored; the confined helper sees it through a read-only bind (confinement.ts).
 * Measured before: about 3 s to boot against about 0.33 s to restore, on an idle machine.
 */
import { createHash } from 'node:crypto'
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { Worker } from 'node:worker_threads'
import type { PythonSnapshot } from '../protocol/messages.js'
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

let building: Promise<PythonSnapshot | undefined> | undefined
let built: PythonSnapshot | undefined
let directory: string | undefined
let pyodideDirectory: string | undefined

/**
 * The snapshot of `runtime`'s Pyodide, built on first call; undefined when it could not be
 * built (each environment then boots the interpreter itself, slower but the same).
 */
export function pythonSnapshot(runtime: PythonRuntime): Promise<PythonSnapshot | undefined> {
  pyodideDirectory = runtime.directory
  building ??= build(runtime).then(
    (snapshot) => (built = snapshot),
    () => undefined,
  )
  return building
}

/** The snapshot, if it is built already: lowering never waits for it. */
export function builtSnapshot(): PythonSnapshot | undefined {
  return built
}

/**
 * What a confined helper must be able to read for Python: Pyodide's own directory (the helper
 * shows none of the host's packages otherwise), and the snapshot file once built.
 */
export function snapshotPaths(): string[] {
  return [...(pyodideDirectory ? [pyodideDirectory] : []), ...(built ? [built.file] : [])]
}

async function build(runtime: PythonRuntime): Promise<PythonSnapshot> {
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
  directory ??= mkdtempSync(path.join(os.tmpdir(), 'ptc-runtime-python-'))
  const file = path.join(directory, `pyodide-${runtime.version}.snapshot`)
  // `wx`: never through a link, or over a file something else put there first.
  writeFileSync(file, answer.bytes, { mode: 0o400, flag: 'wx' })
  chmodSync(directory, 0o500)
  process.once('exit', () => {
    try {
      chmodSync(directory!, 0o700)
      rmSync(directory!, { recursive: true, force: true })
    } catch {
      // best effort: the directory is private and read-only
    }
  })
  return { file, sha256: createHash('sha256').update(answer.bytes).digest('hex'), version: runtime.version }
}
