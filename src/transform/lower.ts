/**
 * `lowerProgram`: turn a model-written program into code the worker can evaluate.
 *
 * The lowered code is a script whose completion value is an async function of one parameter,
 * `__ptc__` (the run's `ProgramHooks`, see `hooks.ts`); calling it runs the program and resolves to the
 * program's completion value. The wrapper sits on the first line and the program's own text
 * keeps its lines and columns wherever no edit touches it, so positions map back exactly.
 *
 * Cost per lowering: one acorn parse of the wrapped program, one walk over its statements (never
 * its expressions), one text pass.
 */
import { PROGRAM_FORMATS, type PtcProgramFormat } from '../seam/types.js'
import { instrumentCompletion } from './completion.js'
import { ProgramEdits, type Wrapper } from './edits.js'
import { FUNCTION_BODY_OPEN, PARSE_CLOSE, type ParsedProgram, parseProgram } from './parse.js'
import { programFile, type SerializedPositions } from './positions.js'
import { lowerToGlobals } from './repl.js'
import { scanProgram } from './scan.js'
import { lowerToScope } from './scoped-repl.js'
import { refuseUsing, supportsUsing } from './using.js'

/** A lowered program, ready to cross to the worker (every field is plain data). */
export interface LoweredProgram {
  /** A script whose completion value is `async (__ptc__) => completion`. */
  code: string
  /** Serializable; rebuild with `new PositionMap(lowered.positions)` in the worker. */
  positions: SerializedPositions
  /** Top-level names this program declares (var/let/const/function/class, incl. every destructured name). */
  declared: string[]
}

/** Options of {@link lowerProgram}. */
export interface LowerOptions {
  /** scoped-repl: names the environment's carried scope holds (usually all earlier `declared`). */
  carried?: readonly string[]
  /** Given: the program is TypeScript, and this is its text with types erased (`eraseTypes`, typescript.ts). */
  erased?: string | undefined
}

const FORMATS: ReadonlySet<string> = new Set(PROGRAM_FORMATS)

/**
 * Lower `source` written in `format`. Throws {@link ProgramSyntaxError} (with the program's
 * own line and column) when it does not parse, uses syntax the format forbids, or declares
 * `using` on a Node that cannot run it; and a TypeError for an unknown format.
 */
export function lowerProgram(source: string, format: PtcProgramFormat, options: LowerOptions = {}): LoweredProgram {
  if (!FORMATS.has(format)) throw new TypeError(`unknown program format "${String(format)}"`)
  const functionBody = format === 'function-body'
  const parsed = parseProgram(source, functionBody, options.erased)
  if (!supportsUsing()) refuseUsing(parsed, source)
  const scan = scanProgram(parsed, { completion: !functionBody, script: !functionBody, source })
  const edits = new ProgramEdits(parsed.text, parsed.programStart, parsed.programEnd)
  let wrapper: Wrapper
  if (functionBody) {
    // The parsed text is already the lowered code: an async function body, returning its value.
    wrapper = { open: FUNCTION_BODY_OPEN, close: PARSE_CLOSE }
    if (parsed.callee) edits.open(parsed.callee.statement.start, 'return ')
    callFunctionProgram(parsed, edits)
  } else {
    instrumentCompletion(edits, scan.completion)
    callFunctionProgram(parsed, edits)
    wrapper = format === 'scoped-repl'
      ? lowerToScope(parsed, scan, edits, options.carried ?? [])
      : lowerToGlobals(parsed, scan, edits)
  }
  const { code, runs } = edits.emit(wrapper)
  // Name the code after its content so stack frames of this run (including frames of functions
  // it declares that later runs call) can be matched with this map.
  const file = programFile(code)
  return { code: `${code}\n//# sourceURL=${file}`, positions: { file, runs }, declared: scan.declared }
}

/**
 * A program that is one function expression is called with no arguments, in place, so its
 * value (awaited by the wrapper, which returns it from an async function) is the program's.
 * Recorded after the completion edits, so `slot = (` opens before `(` and `)()` closes first.
 */
function callFunctionProgram({ callee }: ParsedProgram, edits: ProgramEdits): void {
  if (!callee) return
  edits.open(callee.expression.start, '(')
  edits.close(callee.expression.end, ')()')
}
