/**
 * "Lowering" a Python program: the host cannot parse Python without the interpreter, which it
 * never loads, so the source crosses as it is, with its format and the Pyodide to run it in.
 * The worker compiles it (src/worker/python-prelude.ts), so a syntax error is a failure of the
 * run, with the program's own line and column, like any other.
 */
import { type ProgramCode, REHEARSAL_GLOBAL } from '../protocol/messages.js'
import type { PtcProgramFormat } from '../seam/types.js'
import type { LoweredProgram } from '../transform/index.js'
import { pythonRuntime } from './runtime.js'
import { pythonSnapshot } from './snapshot.js'

/** The rehearsal of a Python deployment's workers (see REHEARSAL_SOURCE), in the function-body format. */
export const PYTHON_REHEARSAL_SOURCE = `import asyncio
echoed = await ${REHEARSAL_GLOBAL}.echo({"list": [1, "two", None, True, {"nested": 2.5}]})
both = await asyncio.gather(${REHEARSAL_GLOBAL}.echo("a"), ${REHEARSAL_GLOBAL}.echo("b"))
print("rehearsal", echoed, both)
return {"echoed": echoed, "both": both}
`

/** `source` ready to cross to the worker as a Python program of `format`. */
export function lowerPython(source: string, format: PtcProgramFormat): LoweredProgram & ProgramCode {
  const runtime = pythonRuntime()
  void pythonSnapshot(runtime) // environments started once it is built restore it; those before boot
  const { directory, version } = runtime
  // No positions: Python's own tracebacks already speak the program's lines.
  return { code: source, positions: { file: 'program.py', runs: [] }, declared: [], python: { format, directory, version } }
}
