/**
 * Two habits of models that would otherwise give baffling results: a program wrapped in one
 * Markdown fence (a `TypeError` at `program:1:3`), and a program that is one function
 * expression (`async () => { … }`), which would evaluate the function and never call it.
 *
 * Both are handled without moving a character: a fence's lines become spaces, so every position
 * in the program is still its line and column as the model wrote it, fence included.
 */
import type { ArrowFunctionExpression, ExpressionStatement, FunctionExpression, Statement } from 'acorn'

/** A fence line: three or more backticks or tildes, then an optional info string (`js`, `ts`…). */
const OPENING_FENCE = /^[ \t]*(`{3,}|~{3,})[^`\r\n\u2028\u2029]*$/
const LINE_BREAK = /\r\n|[\n\r\u2028\u2029]/g

/**
 * `source` with the lines of one Markdown fence around the whole program blanked, or `source`
 * itself when it is not fenced. Fenced means: the first non-blank line opens a fence and the
 * last non-blank line closes it with the same character, at least as long.
 */
export function unfence(source: string): string {
  if (!source.includes('``') && !source.includes('~~')) return source
  const lines = lineSpans(source)
  let first = 0
  while (first < lines.length && isBlank(source, lines[first]!)) first++
  let last = lines.length - 1
  while (last > first && isBlank(source, lines[last]!)) last--
  if (first >= last) return source
  const opening = OPENING_FENCE.exec(slice(source, lines[first]!))
  if (!opening) return source
  const fence = opening[1]!
  const closing = slice(source, lines[last]!).trim()
  if (closing.length < fence.length || closing !== fence[0]!.repeat(closing.length)) return source
  return blank(blank(source, lines[last]!), lines[first]!)
}

/** `[start, end)` of each line, without its line break. */
function lineSpans(source: string): Array<[number, number]> {
  const spans: Array<[number, number]> = []
  let start = 0
  for (const match of source.matchAll(LINE_BREAK)) {
    spans.push([start, match.index])
    start = match.index + match[0].length
  }
  spans.push([start, source.length])
  return spans
}

const slice = (source: string, [start, end]: [number, number]) => source.slice(start, end)
const isBlank = (source: string, span: [number, number]) => slice(source, span).trim() === ''
const blank = (source: string, [start, end]: [number, number]) =>
  source.slice(0, start) + ' '.repeat(end - start) + source.slice(end)

/** A program that is one function expression; lowering calls it and awaits its value. */
export interface FunctionProgram {
  statement: ExpressionStatement
  expression: ArrowFunctionExpression | FunctionExpression
}

/**
 * The function a program consists of, if its only statement is a function expression.
 * Directives may precede it (the function-body wrapper's own `'use strict'` is one).
 */
export function functionProgram(body: readonly Statement[]): FunctionProgram | undefined {
  let index = 0
  while (index < body.length && isDirective(body[index]!)) index++
  const statement = index === body.length - 1 ? body[index] : undefined
  if (statement?.type !== 'ExpressionStatement') return undefined
  const expression = statement.expression
  if (expression.type !== 'ArrowFunctionExpression' && expression.type !== 'FunctionExpression') return undefined
  return { statement, expression }
}

const isDirective = (statement: Statement) => statement.type === 'ExpressionStatement' && statement.directive !== undefined

/**
 * A program starting with `function` or `async function` and no name, after comments. A block
 * comment ends at its first `*\/` and nowhere else: a lazy `[\s\S]*?` could end at any later
 * one, and a hostile program of many comments would make the host backtrack exponentially.
 */
const ANONYMOUS_FUNCTION = /^(?:\s|\/\/[^\n\r\u2028\u2029]*|\/\*[^*]*\*+(?:[^/*][^*]*\*+)*\/)*(?:async\s+)?function\s*\*?\s*\(/

/**
 * Whether a program is headed by an anonymous function: an expression that only parses when
 * it is not read as a declaration.
 */
export function startsWithAnonymousFunction(program: string): boolean {
  return ANONYMOUS_FUNCTION.test(program)
}
