/**
 * The lines of `executionInstructions` that differ for Python programs: how to write each
 * format, how tools are called, what the result may be, and what the interpreter has. The
 * limits, the state rule's place and the sandbox paragraph are the JavaScript text's.
 */
import type { PtcProgramFormat } from '../seam/types.js'
import { pythonRuntime } from './runtime.js'

const FORMATS: Record<PtcProgramFormat, string> = {
  'function-body': 'Write the body of an async Python function: use top-level `await`, and `return` the result.',
  script: 'Write a Python script: top-level `await` works; the value of the last expression statement is the result. Top-level `return` is not allowed.',
  repl: 'Write Python like an interactive session: top-level `await` works; the value of the last expression statement is the result. Top-level `return` is not allowed.',
  'scoped-repl': 'Write Python like an interactive session: top-level `await` works; the value of the last expression statement is the result. Top-level `return` is not allowed.',
}

const STATE: Record<PtcProgramFormat, string> = {
  'function-body': 'Module globals (names you declare `global`) persist between calls of this conversation; local variables and imports do not.',
  script: 'Top-level names (variables, functions, imports) persist between calls of this conversation.',
  repl: 'Top-level names (variables, functions, imports) persist between calls of this conversation.',
  'scoped-repl': 'Each call starts with a copy of the top-level names earlier calls left.',
}

/** How a Python program is written for `format`, before the limits. */
export function pythonInstructionLines(format: PtcProgramFormat): string[] {
  const { python, version } = pythonRuntime()
  return [
    FORMATS[format],
    `The interpreter is CPython ${python} (Pyodide ${version}) with the standard library only: no packages are installed and none can be; ` +
      'there is no `ssl` and no time-zone database, and Python\'s own network modules (socket, urllib, http.client) reach no network. ' +
      '`open()` and `os` see the interpreter\'s own in-memory file system, empty at first, not the machine\'s files. ' +
      'Where the network is granted, `r = await fetch(url, method="GET", headers={...}, body=str | bytes, json=value)` reaches it: ' +
      '`r.status`, `r.ok`, `r.headers`, `r.text`, `r.content`, `r.json()`; a refused request raises ConnectionError.',
    'Tools are namespaces of async functions taking keyword arguments (or one dict): `r = await tools.search(q="x")`. Arguments and results are JSON: dict, list, str, int, float, bool, None. ' +
      'Run independent calls concurrently with `asyncio.gather`. A failed tool call raises its namespace\'s error class; catch it to recover.',
    'The result must be JSON (a dict with str keys, list, str, int within ±2**53, finite float, bool, None); return nothing when you have only printed.',
    '`print` and writes to sys.stdout or sys.stderr print text; `inspect(image)` shows an Image a tool returned (its path, width, height and media_type are readable); `input()` reads nothing.',
  ]
}

/** What persists between calls of one conversation, for `format`. */
export function pythonStateLine(format: PtcProgramFormat): string {
  return STATE[format]
}
