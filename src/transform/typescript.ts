/**
 * TypeScript programs: types are erased by replacing them with whitespace, so the erased text
 * has the program's length, lines and columns, and everything after it (acorn, the lowering,
 * stack frames) sees the program's own positions without a source map.
 *
 * The eraser is injected (the host passes SWC's `strip-only` transform, see
 * src/host/run/typescript-eraser.ts), so the transformer stays free of Node APIs and optional packages.
 */
import { startsWithAnonymousFunction } from './habits.js'
import { countLineBreaks, LineIndex } from './line-index.js'
import { ProgramSyntaxError } from './syntax-error.js'

/** Replaces a TypeScript program's types with whitespace; throws the eraser's error for what it cannot erase. */
export type TypeEraser = (source: string) => string

/**
 * The eraser parses a module, where top-level `return` is an error: the program is erased as a
 * function body (`await` works there too). A program that is one anonymous function sits in
 * parentheses of its own lines, as in parse.ts.
 */
const PLAIN = { open: 'async function __ptc__() {\n', close: '\n}' }
const PARENTHESIZED = { open: 'async function __ptc__() {\n(\n', close: '\n)\n}' }

/**
 * `program` with its types erased. Throws {@link ProgramSyntaxError} at the program's own line
 * and column (in `source`, the text as written) when the eraser refuses it.
 */
export function eraseTypes(program: string, source: string, erase: TypeEraser): string {
  let failure: unknown
  for (const wrapper of startsWithAnonymousFunction(program) ? [PARENTHESIZED, PLAIN] : [PLAIN]) {
    const text = wrapper.open + program + wrapper.close
    let erased: string
    try {
      erased = erase(text)
    } catch (error) {
      failure = error
      continue
    }
    // Positions would no longer be the program's own: refuse rather than misreport them.
    if (erased.length !== text.length) throw ProgramSyntaxError.at(source, 0, 'the types of this program could not be erased in place')
    return erased.slice(wrapper.open.length, wrapper.open.length + program.length)
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
