import { describe, expect, test } from 'vitest'
import { lowerProgram, ProgramSyntaxError } from '../../src/transform/index.js'

const FORMATS = ['function-body', 'script', 'repl', 'scoped-repl'] as const

function syntaxError(source: string, format: (typeof FORMATS)[number] = 'script'): ProgramSyntaxError {
  try {
    lowerProgram(source, format)
  } catch (error) {
    if (error instanceof ProgramSyntaxError) return error
    throw error
  }
  throw new Error('expected a syntax error')
}

describe('syntax errors', () => {
  test.each(FORMATS)('%s: the message has the rule, the original position, the line and a caret', (format) => {
    const error = syntaxError('const ok = 1\n  await Promise..resolve()', format)
    expect(error.message).toBe(
      "SyntaxError: Unexpected token (line 2, column 17)\n  await Promise..resolve()\n                ^",
    )
    expect(error).toMatchObject({ name: 'SyntaxError', line: 2, column: 17 })
  })

  test('the error is a ProgramSyntaxError and an Error', () => {
    const error = syntaxError('let let = 1')
    expect(error).toBeInstanceOf(ProgramSyntaxError)
    expect(error).toBeInstanceOf(Error)
  })

  test('a program that ends too early reports the end of input', () => {
    const error = syntaxError('if (x) {\n  foo()')
    expect(error.message).toMatch(/^SyntaxError: Unexpected end of input \(line 2, column 8\)/)
  })

  test('an unterminated template keeps acorn’s rule', () => {
    expect(syntaxError('const t = `abc').message).toMatch(/^SyntaxError: Unterminated template \(line 1, column 12\)/)
  })

  test('the caret keeps tabs so it lines up under the column', () => {
    expect(syntaxError('\t\tfoo bar').message.split('\n')[2]).toBe('\t\t    ^')
  })

  test('positions count CRLF, CR and U+2028 line breaks as the engine does', () => {
    expect(syntaxError('1\r\n2\r3\u20284\n  )')).toMatchObject({ line: 5, column: 3 })
  })

  test('a long line is quoted around the column, not whole', () => {
    const error = syntaxError(`${'x;'.repeat(5000)} )`)
    const [, quoted, caret] = error.message.split('\n')
    expect(quoted!.length).toBeLessThan(130)
    expect(quoted![caret!.length - 1]).toBe(')')
  })

  test('strict-mode violations in a use-strict script are syntax errors', () => {
    expect(syntaxError('"use strict"\nvar x = 010')).toMatchObject({ line: 2, column: 9 })
  })

  test('await used as an identifier is rejected as the async wrapper would', () => {
    expect(() => lowerProgram('var await = 1', 'repl')).toThrow(ProgramSyntaxError)
  })
})
