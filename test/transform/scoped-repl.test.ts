import { describe, expect, test } from 'vitest'
import { lowerProgram } from '../../src/transform/index.js'
import { runAll, TestEnvironment } from './environment.js'

describe('scoped-repl carries bindings between runs', () => {
  test.each([
    ['var', 'var x = await Promise.resolve(1)', 'x', 1],
    ['let', 'let x = 2', 'x', 2],
    ['const', 'const x = 3', 'x', 3],
    ['function', 'function x() { return 4 }', 'x()', 4],
    ['class', 'class X { static v = 5 }', 'X.v', 5],
    ['destructured names', 'const { a: [x = 6] = [] } = {}', 'x', 6],
  ])('%s declarations are visible to the next run', async (_, first, second, expected) => {
    expect(await runAll('scoped-repl', first, second)).toBe(expected)
  })

  test('bindings are not properties of the global object', async () => {
    const environment = new TestEnvironment('scoped-repl')
    await environment.run('let local = 1; var alsoLocal = 2')
    expect(Object.keys(environment.global)).not.toContain('local')
    expect(Object.keys(environment.global)).not.toContain('alsoLocal')
  })

  test('a carried name survives runs that do not mention it', async () => {
    expect(await runAll('scoped-repl', 'let kept = 1', '2', '3', 'kept')).toBe(1)
  })

  test('any name may be redeclared with any kind', async () => {
    expect(await runAll('scoped-repl', 'let x = 1', 'const x = 2', 'class x { static v = 3 }', 'function x() { return 4 }', 'x()')).toBe(4)
  })

  test('const keeps its meaning inside a run', async () => {
    const environment = new TestEnvironment('scoped-repl')
    const { error } = await environment.fail('const fixed = 1\nfixed = 2')
    expect(error.name).toBe('TypeError')
  })

  test('a carried copy of a const is assignable in a later run', async () => {
    expect(await runAll('scoped-repl', 'const c = 1', 'c = 2', 'c')).toBe(2)
  })

  test('carried values are the same objects, not clones', async () => {
    expect(await runAll('scoped-repl', 'const box = { n: 1 }\nglobalThis.first = box', 'box === globalThis.first')).toBe(true)
  })

  test('a var redeclared without an initializer starts with the carried value', async () => {
    expect(await runAll('scoped-repl', 'var v = 1', 'var v; v')).toBe(1)
  })

  test('function declarations are hoisted within a run', async () => {
    expect(await runAll('scoped-repl', 'const early = later()\nfunction later() { return 1 }\nearly')).toBe(1)
  })
})

describe('scoped-repl closures keep their own bindings', () => {
  test('a closure from an earlier run keeps that run’s binding after a redeclaration', async () => {
    expect(await runAll('scoped-repl', 'let x = 1\nfunction getX() { return x }', 'const x = 2', '[x, getX()]')).toEqual([2, 1])
  })

  test('assigning a carried name changes only the current copy', async () => {
    const environment = new TestEnvironment('scoped-repl')
    await environment.run('let count = 1\nfunction read() { return count }')
    await environment.run('count = 5')
    expect(await environment.run('[count, read()]')).toEqual([5, 1])
  })

  test('a closure updates the binding of its own run, not the copy later runs carry', async () => {
    const environment = new TestEnvironment('scoped-repl')
    await environment.run('let hits = 0\nfunction hit() { return ++hits }')
    expect(await environment.run('hit(); hit()')).toBe(2)
    expect(await environment.run('hits')).toBe(0)
  })
})

describe('scoped-repl runs that throw', () => {
  test('bindings initialized before the throw are carried', async () => {
    const environment = new TestEnvironment('scoped-repl')
    await environment.fail('let before = 1\nthrow new Error("stop")')
    expect(await environment.run('before')).toBe(1)
  })

  test('a redeclaration still in its temporal dead zone keeps the earlier value', async () => {
    const environment = new TestEnvironment('scoped-repl')
    await environment.run('let x = 1')
    await environment.fail('throw new Error("stop")\nlet x = 2')
    expect(await environment.run('x')).toBe(1)
  })

  test('assignments made before the throw are carried', async () => {
    const environment = new TestEnvironment('scoped-repl')
    await environment.run('let x = 1')
    await environment.fail('x = 3\nthrow new Error("stop")')
    expect(await environment.run('x')).toBe(3)
  })

  test('a run that rejects after an await still commits', async () => {
    const environment = new TestEnvironment('scoped-repl')
    await environment.fail('let late = await Promise.resolve(4)\nawait Promise.reject(new Error("later"))')
    expect(await environment.run('late')).toBe(4)
  })
})

describe('scoped-repl lowering', () => {
  test('completion values follow script rules', async () => {
    expect(await runAll('scoped-repl', 'const c = await true\nif (c) { "yes" } else { "no" }')).toBe('yes')
  })

  test('a trailing line comment does not swallow the completion', async () => {
    expect(await runAll('scoped-repl', 'let x = await 1', 'x // done')).toBe(1)
  })

  test('a strict program stays strict', async () => {
    const { error } = await new TestEnvironment('scoped-repl').fail('"use strict"\nundeclared = 1')
    expect(error.name).toBe('ReferenceError')
  })

  test('carried names that cannot be bindings are not carried', () => {
    const { code } = lowerProgram('1', 'scoped-repl', { carried: ['ok', 'eval', 'yield', 'not a name', '__ptc__'] })
    expect(code).toContain('let ok = __ptc__.carried("ok");')
    expect(code).not.toMatch(/carried\("(eval|yield|not a name|__ptc__)"\)/)
  })

  test('a carried name the program declares is not copied', () => {
    const { code } = lowerProgram('let x = 2', 'scoped-repl', { carried: ['x'] })
    expect(code).not.toContain('carried("x")')
  })
})
