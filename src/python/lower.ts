/**
 * "Lowering" a Python program: the host cannot parse Python without the interpreter, which it
 * never loads, so the source crosses as it is, with its format and the Pyodide to run it in.
 * The worker compiles it (src/worker/python-prelude.ts), so a syntax error is a failure of the
 * run, with the program's own line and column, like any other.
 */
import type { ProgramCode } from '../protocol.js'
import type { PtcProgramFormat } from '../seam/types.js'
import type { LoweredProgram } from '../transform/index.js'
import { pythonRuntime } from './runtime.js'

/** `source` ready to cross to the worker as a Python program of `format`. */
export function lowerPython(source: string, format: PtcProgramFormat): LoweredProgram & ProgramCode {
  const { directory, version } = pythonRuntime()
  // No positions: Python's own tracebacks already speak the program's lines.
  return { code: source, positions: { file: 'program.py', runs: [] }, declared: [], python: { format, directory, version } }
}
