import { describe, expect, test } from 'vitest'
import { lowerProgram, ProgramSyntaxError } from '../../src/transform/index.js'
import { runAll, TestEnvironment } from './environment.js'

describe('function-body programs', () => {
  test('the returned value is the completion', async () => {
    expect(await runAll('function-body', 'const x = await Promise.resolve(2)\nreturn x * 3')).toBe(6)
  })

  test('a program without return completes with undefined', async () => {
    expect(await runAll('function-body', '1\n2')).toBeUndefined()
  })

  test('return may appear inside top-level blocks', async () => {
    expect(await runAll('function-body', 'for (const x of [1, 2, 3]) { if (x === 2) return x }')).toBe(2)
  })

  test('the body is strict: assigning an undeclared name throws', async () => {
    const { error } = await new TestEnvironment('function-body').fail('undeclared = 1')
    expect(error.name).toBe('ReferenceError')
  })

  test('with is a syntax error in strict mode', () => {
    expect(() => lowerProgram('with (a) {}', 'function-body')).toThrow("'with' in strict mode")
  })

  test('a legacy octal literal is a syntax error in strict mode', () => {
    expect(() => lowerProgram('return 017', 'function-body')).toThrow(ProgramSyntaxError)
  })

  test('declarations stay local to the run', async () => {
    const environment = new TestEnvironment('function-body')
    await environment.run('const secret = 1\nvar other = 2')
    expect(environment.evaluate('typeof secret + typeof other')).toBe('undefinedundefined')
  })

  test('declared lists the body’s top-level names', () => {
    expect(lowerProgram('const [a, b] = [1, 2]\nfunction f() { var inner }\n{ var c }\nclass K {}', 'function-body').declared)
      .toEqual(['a', 'b', 'f', 'c', 'K'])
  })

  test('a trailing line comment does not swallow the closing of the wrapper', async () => {
    expect(await runAll('function-body', 'return 5 // done')).toBe(5)
  })
})

describe('function-body wrapper escapes', () => {
  test.each([
    ['closing the wrapper and opening another function', '}); (function () {'],
    ['closing the wrapper into a sequence', '}, function () {'],
    ['closing the wrapper into a binary expression', '}) + (function () {'],
    ['closing the wrapper into a call', '})(); (async function () {'],
    ['a stray closing brace', 'return 1 }'],
  ])('%s is a syntax error', (_, source) => {
    expect(() => lowerProgram(source, 'function-body')).toThrow(ProgramSyntaxError)
  })

  test('script formats reject the same escapes', () => {
    expect(() => lowerProgram('}); (async () => {', 'repl')).toThrow(ProgramSyntaxError)
    expect(() => lowerProgram('}); (async () => {', 'scoped-repl')).toThrow(ProgramSyntaxError)
  })

  test('an escape attempt points at the brace that closes the wrapper', () => {
    try {
      lowerProgram('const a = 1\n  }); (function () {', 'function-body')
      expect.unreachable()
    } catch (error) {
      expect(error).toMatchObject({ line: 2, column: 3 })
    }
  })
})
