/**
 * Parsing a program exactly as V8 will compile it: inside an async function. Parsing the bare
 * source as a script would accept things the wrapper rejects (`var await`, `({ await })`), so
 * we parse the wrapped text once and check that the program did not close our function early.
 */
import { parse, type BlockStatement, type ModuleDeclaration, type Node, type Options, type Statement } from 'acorn'
import { BOOTSTRAP_NAME } from '../seam/names.js'
import { type FunctionProgram, functionProgram, startsWithAnonymousFunction, unfence } from './habits.js'
import { acornRule, ProgramSyntaxError } from './syntax-error.js'

/** Wrapper of `function-body` programs; the lowered code is exactly the parsed text. */
export const FUNCTION_BODY_OPEN = `(async function (${BOOTSTRAP_NAME}) { 'use strict';`
/** Parse-time wrapper of script-like programs (the lowered wrapper differs but has the same scope rules). */
const SCRIPT_OPEN = '(async () => {'
/** Closes either wrapper; the line break ends a trailing `//` comment. */
export const PARSE_CLOSE = '\n})'

const OPTIONS: Options = { ecmaVersion: 'latest', sourceType: 'script' }

/** A parsed program and where it sits in the parsed text. */
export interface ParsedProgram {
  /** The wrapped text acorn parsed; node offsets refer to it. */
  text: string
  /** `[programStart, programEnd)` of `text` is the program; it starts line 1 (0-based). */
  programStart: number
  programEnd: number
  /** The program's top-level statements. */
  body: Statement[]
  /** Whether the program's top level is strict code. */
  strict: boolean
  /** Set when the program is one function expression, which lowering calls. */
  callee?: FunctionProgram
}

/** `source` as it is parsed, every character in its place: unfenced, a hashbang made a comment. */
export function programText(source: string): string {
  // A hashbang is only legal at the very start of a script; keep its text as a line comment.
  const unfenced = unfence(source)
  return unfenced.startsWith('#!') ? '//' + unfenced.slice(2) : unfenced
}

/**
 * Parse `source` as the body of an async function (`functionBody`: strict, with our parameter)
 * or as a script-like program; a TypeScript program is parsed as `erased`, its text with types
 * erased (typescript.ts). Throws {@link ProgramSyntaxError} with the program's positions.
 */
export function parseProgram(source: string, functionBody: boolean, erased?: string): ParsedProgram {
  const program = erased ?? programText(source)
  const open = (functionBody ? FUNCTION_BODY_OPEN : SCRIPT_OPEN) + '\n'
  // `async function () {}` alone is a function expression only inside parentheses; ours stay
  // outside the program's lines, and the ordinary parse below reports the program's own errors.
  if (startsWithAnonymousFunction(program)) {
    const parsed = tryParse(open + '(\n', program, '\n)' + PARSE_CLOSE, functionBody)
    const callee = parsed && functionProgram(parsed.body)
    if (parsed && callee) {
      // The statement spans our parentheses; lowering may edit only the program's own text.
      callee.statement.start = callee.expression.start
      callee.statement.end = callee.expression.end
      return { ...parsed, callee }
    }
  }
  const text = open + program + PARSE_CLOSE
  const programStart = open.length
  let root
  try {
    root = parse(text, OPTIONS)
  } catch (error) {
    throw toProgramError(error, source, programStart)
  }
  const body = checkedBody(root.body, text)
  if (!body) {
    // The program closed our function with a \`}\` of its own: point at that brace.
    const statement = root.body[0]
    const block = statement?.type === 'ExpressionStatement' ? wrapperBody(statement.expression) : undefined
    const closing = block ? block.end - 1 - programStart : 0
    throw ProgramSyntaxError.at(source, closing, "Unexpected token '}'")
  }
  const callee = functionProgram(body)
  return {
    text,
    programStart,
    programEnd: programStart + program.length,
    body,
    strict: functionBody || hasUseStrict(body),
    ...(callee ? { callee } : {}),
  }
}

/** `program` between `open` and `close`, when it parses as one function of ours. */
function tryParse(open: string, program: string, close: string, functionBody: boolean): ParsedProgram | undefined {
  const text = open + program + close
  let root
  try {
    root = parse(text, OPTIONS)
  } catch {
    return undefined
  }
  const body = checkedBody(root.body, text)
  if (!body) return undefined
  return {
    text,
    programStart: open.length,
    programEnd: open.length + program.length,
    body,
    strict: functionBody || hasUseStrict(body),
  }
}

/** The statements of our wrapper function, unless the program escaped it. */
function checkedBody(statements: ReadonlyArray<Statement | ModuleDeclaration>, text: string): Statement[] | undefined {
  const statement = statements[0]
  const block = statement?.type === 'ExpressionStatement' ? wrapperBody(statement.expression) : undefined
  if (statements.length !== 1 || !block || block.end !== text.length - 1) return undefined
  return block.body
}

/**
 * The body of our wrapper function, which starts right after the opening parenthesis. When a
 * program escapes, our function becomes the leftmost operand of a larger expression.
 */
function wrapperBody(expression: Node | undefined): BlockStatement | undefined {
  let node = expression as LeftmostNode | undefined
  while (node && node.start <= 1) {
    if ((node.type === 'ArrowFunctionExpression' || node.type === 'FunctionExpression') && node.start === 1) {
      return node.body?.type === 'BlockStatement' ? (node.body as BlockStatement) : undefined
    }
    node = node.expressions?.[0] ?? node.left ?? node.callee ?? node.object ?? node.test ?? node.tag
  }
  return undefined
}

/** The fields `wrapperBody` follows down the left edge of an expression. */
interface LeftmostNode extends Node {
  body?: Node
  expressions?: LeftmostNode[]
  left?: LeftmostNode
  callee?: LeftmostNode
  object?: LeftmostNode
  test?: LeftmostNode
  tag?: LeftmostNode
}

function hasUseStrict(body: Statement[]): boolean {
  for (const statement of body) {
    if (statement.type !== 'ExpressionStatement' || statement.directive === undefined) return false
    if (statement.directive === 'use strict') return true
  }
  return false
}

function toProgramError(error: unknown, source: string, programStart: number): unknown {
  if (!(error instanceof SyntaxError) || typeof (error as { pos?: unknown }).pos !== 'number') return error
  const offset = (error as SyntaxError & { pos: number }).pos - programStart
  // Errors inside our closing text mean the program ended too early (an open brace, string…).
  const rule = offset >= source.length && !/^Unterminated/.test(error.message)
    ? 'Unexpected end of input'
    : acornRule(error.message)
  return ProgramSyntaxError.at(source, offset, rule)
}
