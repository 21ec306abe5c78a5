/**
 * TypeScript programs: types are erased by replacing them with whitespace, so the erased text
 * has the program's length, lines and columns, and everything after it (acorn, the lowering,
 * stack frames) sees the program's own positions without a source map.
 *
 * The eraser is injected (the host passes SWC's `strip-only` transform, see
 * src/host/run/typescript-eraser.ts), so the transformer stays free of Node APIs and optional
 * packages. Erasing is a step before lowering, so a host may await its eraser and lower after.
 */
import { startsWithAnonymousFunction } from './habits.js'
import { countLineBreaks, LineIndex } from './line-index.js'
import { programText } from './parse.js'
import { ProgramSyntaxError } from './syntax-error.js'

/** Replaces a TypeScript program's types with whitespace; throws the eraser's error for what it cannot erase. */
export type TypeEraser = (source: string) => string
/** A {@link TypeEraser} the caller awaits (the host's runs off its own thread); rejects as it would throw. */
export type AsyncTypeEraser = (source: string) => Promise<string>

/**
 * The eraser parses a module, where top-level `return` is an error: the program is erased as a
 * function body (`await` works there too). A program that is one anonymous function sits in
 * parentheses of its own lines, as in parse.ts.
 */
const PLAIN = { open: 'async function __ptc__() {\n', close: '\n}' }
const PARENTHESIZED = { open: 'async function __ptc__() {\n(\n', close: '\n)\n}' }

/**
 * `source` as parsed (programText), with its types erased: pass it to `lowerProgram` as `erased`.
 * Throws {@link ProgramSyntaxError} at the program's own line and column (in `source`, the text
 * as written) when the eraser refuses it.
 */
export function eraseTypes(source: string, erase: TypeEraser): string {
  const steps = erasure(source)
  let step = steps.next()
  while (!step.done) step = steps.next(settle(erase, step.value))
  return step.value
}

/** {@link eraseTypes}, awaiting each erasure. */
export async function eraseTypesAwaiting(source: string, erase: AsyncTypeEraser): Promise<string> {
  const steps = erasure(source)
  let step = steps.next()
  while (!step.done) step = steps.next(await erase(step.value).then((code) => ({ code }), (failure: unknown) => ({ failure })))
  return step.value
}

/** What came of one erasure: its text, or what the eraser threw. */
type Erased = { code: string } | { failure: unknown }

function settle(erase: TypeEraser, text: string): Erased {
  try {
    return { code: erase(text) }
  } catch (failure) {
    return { failure }
  }
}

/**
 * The erasure of `source` in steps, so one order of attempts serves an eraser called or awaited:
 * it yields each text to erase and is sent back what came of it, until one erases.
 */
function* erasure(source: string): Generator<string, string, Erased> {
  const program = programText(source)
  let failure: unknown
  for (const wrapper of startsWithAnonymousFunction(program) ? [PARENTHESIZED, PLAIN] : [PLAIN]) {
    const text = wrapper.open + program + wrapper.close
    const erased = yield text
    if ('failure' in erased) {
      failure = erased.failure
      continue
    }
    // Positions would no longer be the program's own: refuse rather than misreport them.
    if (erased.code.length !== text.length) throw ProgramSyntaxError.at(source, 0, 'the types of this program could not be erased in place')
    return erased.code.slice(wrapper.open.length, wrapper.open.length + program.length)
  }
  throw programError(failure, source, PLAIN.open)
}

/** What the eraser throws: `code`, a message, and 1-based line, display-width column of the wrapped text. */
interface EraserError {
  code: string
  message: string
  startLine: number
  startColumn: number
}

function isEraserError(error: unknown): error is EraserError {
  if (typeof error !== 'object' || error === null) return false
  const { code, message, startLine, startColumn } = error as Partial<EraserError>
  return typeof code === 'string' && typeof message === 'string' && Number.isSafeInteger(startLine) && Number.isSafeInteger(startColumn)
}

/**
 * The eraser's failure as a syntax error of the program. Anything it throws is the program's
 * doing (a hostile program must get a result, never make `run` reject), so a failure without a
 * position still becomes one, at the start.
 */
function programError(error: unknown, source: string, open: string): ProgramSyntaxError {
  if (!isEraserError(error)) {
    const message = error instanceof Error ? error.message : typeof error === 'string' ? error : 'unknown failure'
    return ProgramSyntaxError.at(source, 0, `TypeScript could not be erased: ${message.split('\n')[0]}`)
  }
  const lines = new LineIndex(source)
  const line = Math.min(Math.max(0, error.startLine - 1 - countLineBreaks(open).breaks), lines.lineOf(source.length))
  const rule = error.message.split('\n')[0]!.replace(/ in strip-only mode$/, ' (only types are erased)')
  return ProgramSyntaxError.at(source, lines.lineStart(line) + utf16Column(lines.lineText(line), error.startColumn), rule)
}

/**
 * The UTF-16 column of a display column: the eraser counts East Asian wide characters (CJK,
 * Hangul, fullwidth forms, most emoji) as two columns.
 */
function utf16Column(line: string, displayColumn: number): number {
  let width = 0
  let index = 0
  while (index < line.length && width < displayColumn) {
    const point = line.codePointAt(index)!
    width += isWide(point) ? 2 : 1
    index += point > 0xffff ? 2 : 1
  }
  return index
}

function isWide(point: number): boolean {
  return (point >= 0x1100 && point <= 0x115f) || (point >= 0x2e80 && point <= 0xa4cf) || (point >= 0xac00 && point <= 0xd7a3) ||
    (point >= 0xf900 && point <= 0xfaff) || (point >= 0xfe30 && point <= 0xfe4f) || (point >= 0xff00 && point <= 0xff60) ||
    (point >= 0xffe0 && point <= 0xffe6) || (point >= 0x1f300 && point <= 0x1faff) || (point >= 0x20000 && point <= 0x3fffd)
}
