import { describe, expect, test } from 'vitest'
import { lowerProgram, ProgramSyntaxError } from '../../src/transform/index.js'
import { TestEnvironment } from './environment.js'

const FORMATS = ['function-body', 'script', 'repl', 'scoped-repl'] as const

/** The same program in each format: how it states its result. */
const RESULT = { 'function-body': 'return', script: '', repl: '', 'scoped-repl': '' } as const

function programFrames(stack: string): string[] {
  return [...stack.matchAll(/program\.js[^\s):]*:\d+:\d+/g)].map((match) => match[0])
}

describe.each(FORMATS)('%s: a program in one Markdown fence', (format) => {
  test.each(['```js', '```javascript', '```ts', '```', '````JS', '~~~'])('runs without its fence %s', async (fence) => {
    const close = fence.startsWith('~') ? '~~~' : '`'.repeat(fence.replace(/[^`]/g, '').length)
    const source = `\n${fence}\nconst a = 20\n${RESULT[format]} a + 22\n${close}\n`
    expect(await new TestEnvironment(format).run(source)).toBe(42)
  })

  test('an error keeps the line and column it has in the fenced text', async () => {
    const source = '```js\nconst a = 1\n  throw new Error("x")\n```'
    const { stack } = await new TestEnvironment(format).fail(source)
    expect(programFrames(stack)).toEqual(['program.js:3:9'])
  })

  test('a syntax error names the line and column in the fenced text', () => {
    const error = (() => {
      try {
        lowerProgram('```js\nconst a = 1\nconst = 2\n```', format)
      } catch (caught) {
        return caught
      }
    })()
    expect(error).toBeInstanceOf(ProgramSyntaxError)
    expect(error).toMatchObject({ line: 3, column: 7 })
  })

  test('a fence that is not closed is not removed', () => {
    expect(() => lowerProgram('```js\nconst a = 1', format)).toThrow(ProgramSyntaxError)
  })

  test('a fence inside a template literal is left alone', async () => {
    const source = `const md = \`\n~~~\nx\n~~~\n\`\n${RESULT[format]} md`
    expect(await new TestEnvironment(format).run(source)).toBe('\n~~~\nx\n~~~\n')
  })
})

describe.each(FORMATS)('%s: a program that is one function expression', (format) => {
  test.each([
    ['an async arrow with a block', 'async () => {\n  const a = await Promise.resolve(40)\n  return a + 2\n}'],
    ['an arrow with an expression body', '() => 42'],
    ['a parenthesized arrow with a semicolon', '(async () => { return 42 });'],
    ['an anonymous async function', 'async function () {\n  return 42\n}'],
    ['an anonymous function after a comment', '// the answer\nfunction () { return 42 }\n'],
    ['a named function expression in parentheses', '(async function main() { return 42 })'],
    ['a fenced async arrow', '```js\nasync () => {\n  return 42\n}\n```'],
  ])('is called and its value awaited: %s', async (_, source) => {
    expect(await new TestEnvironment(format).run(source)).toBe(42)
  })

  test('an error inside it keeps the program’s line and column', async () => {
    const source = 'async () => {\n  await null\n  throw new Error("x")\n}'
    const { stack } = await new TestEnvironment(format).fail(source)
    expect(programFrames(stack)).toEqual(['program.js:3:9'])
  })

  test('an error on the function’s first line keeps its column', async () => {
    const { stack } = await new TestEnvironment(format).fail('async function () { throw new Error("x") }')
    expect(programFrames(stack)[0]).toBe('program.js:1:27')
  })

  test('a named function declaration is declared, not called', async () => {
    const environment = new TestEnvironment(format)
    expect(await environment.run('function answer() { globalThis.called = true; return 42 }')).toBeUndefined()
    expect(environment.evaluate('globalThis.called')).toBeUndefined()
  })

  test('a function followed by another statement is not called', async () => {
    const environment = new TestEnvironment(format)
    await environment.run('(() => { globalThis.called = true });\n1')
    expect(environment.evaluate('globalThis.called')).toBeUndefined()
  })

  test('an anonymous function followed by more code is a syntax error at the program’s position', () => {
    expect(() => lowerProgram('function () {}\nlet x = 1', format)).toThrow(/line 1, column 10/)
  })
})

test('a program of many block comments is lowered in linear time', () => {
  const source = '/* */ '.repeat(5000) + 'x'
  const started = performance.now()
  lowerProgram(source, 'script')
  expect(performance.now() - started).toBeLessThan(2000)
})
