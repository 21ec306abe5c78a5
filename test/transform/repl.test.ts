import { describe, expect, test } from 'vitest'
import { lowerProgram } from '../../src/transform/index.js'
import { runAll, TestEnvironment } from './environment.js'

describe('repl declarations persist across runs', () => {
  test.each([
    ['var', 'var x = await Promise.resolve(1)', 'x', 1],
    ['let', 'let x = await Promise.resolve(2)', 'x', 2],
    ['const', 'const x = await Promise.resolve(3)', 'x', 3],
    ['function', 'await 0; function x() { return 4 }', 'x()', 4],
    ['async function', 'async function x() { return 5 }', 'await x()', 5],
    ['generator', 'function* x() { yield 6 }', '[...x()][0]', 6],
    ['async generator', 'async function* x() { yield 7 }', '(await x().next()).value', 7],
    ['class', 'class X { static v = 8 }', 'X.v', 8],
  ])('%s declarations are visible to the next run', async (_, first, second, expected) => {
    expect(await runAll('repl', first, second)).toBe(expected)
  })

  test('top-level declarations become properties of the global object', async () => {
    const environment = new TestEnvironment('repl')
    await environment.run('var a = 1; let b = 2; const c = 3; function d() {}; class E {}')
    expect(Object.keys(environment.global)).toEqual(expect.arrayContaining(['a', 'b', 'c', 'd', 'E']))
  })

  test('destructuring with defaults, rest, holes and nesting binds every name', async () => {
    const environment = new TestEnvironment('repl')
    await environment.run('const obj = { a: 1, b: [3, 9], e: 5, f: 6 }\nconst { a, b: [c, , d = 4] = [], ...rest } = obj')
    expect(await environment.run('[a, c, d, rest]')).toEqual([1, 3, 4, { e: 5, f: 6 }])
  })

  test('array destructuring with holes, defaults and rest binds every name', async () => {
    expect(await runAll('repl', 'let [, second, third = 3, ...others] = [1, 2, undefined, 4, 5]', '[second, third, others]'))
      .toEqual([2, 3, [4, 5]])
  })

  test('several declarators in one declaration all persist', async () => {
    expect(await runAll('repl', 'let { aa, bb } = await Promise.resolve({ aa: 1, bb: 2 }), f = 5;', '[aa, bb, f]'))
      .toEqual([1, 2, 5])
  })

  test('a declaration without an initializer is undefined', async () => {
    expect(await runAll('repl', 'let dd = 1', 'let dd;', 'dd')).toBeUndefined()
  })

  test('var in a top-level loop head persists', async () => {
    expect(await runAll('repl', 'for (var i = 0; i < 10; ++i) { await i; }', 'i')).toBe(10)
  })

  test('var in a for-of head persists', async () => {
    expect(await runAll('repl', 'for (var [k, v] of [["a", 1], ["b", 2]]) await v', '[k, v]')).toEqual(['b', 2])
  })

  test('let in a loop head stays local to the loop', async () => {
    expect(await runAll('repl', 'for (let j = 0; j < 5; ++j) { await j; }', 'typeof j')).toBe('undefined')
  })

  test('a block-level function in sloppy code becomes global', async () => {
    expect(await runAll('repl', 'if (await true) { function bar() { return 1 }; }', 'bar()')).toBe(1)
  })

  test('a block-level function in strict code stays local to its block', async () => {
    expect(await runAll('repl', '"use strict"\n{ function strictInner() {} }', 'typeof strictInner')).toBe('undefined')
  })

  test('a block-level function in a switch case becomes global in sloppy code', async () => {
    expect(await runAll('repl', 'switch (1) { case 1: function picked() { return "case" } }', 'picked()')).toBe('case')
  })

  test('a block-level class stays local to its block', async () => {
    expect(await runAll('repl', 'if (await true) { class Bar {}; }', 'typeof Bar')).toBe('undefined')
  })

  test('var redeclared without an initializer keeps its value', async () => {
    expect(await runAll('repl', 'var kept = 1', 'var kept; kept')).toBe(1)
  })

  test('a let initializer reads the previous run’s value of the name it redeclares', async () => {
    expect(await runAll('repl', 'let n = 1', 'let n = n + 1', 'n')).toBe(2)
  })
})

describe('repl redeclaration across runs', () => {
  test.each([
    ['let → const', 'let x = 1', 'const x = 2'],
    ['const → let', 'const x = 1', 'let x = 2'],
    ['const → const', 'const x = 1', 'const x = 2'],
    ['const → var', 'const x = 1', 'var x = 2'],
    ['function → class', 'function x() {}', 'class x { static v = 2 }; x = x.v'],
    ['class → function', 'class x {}', 'function x() { return 2 }; x = x()'],
    ['var → let', 'var x = 1', 'let x = 2'],
    ['let → function', 'let x = 1', 'function x() {}; x = 2'],
  ])('%s: the later declaration wins', async (_, first, second) => {
    expect(await runAll('repl', first, second, 'x')).toBe(2)
  })

  test('a const redeclared with var becomes writable', async () => {
    expect(await runAll('repl', 'const c = 1', 'var c', 'c = 5; c')).toBe(5)
  })

  test('function declarations are hoisted within a run', async () => {
    expect(await runAll('repl', 'const early = hoisted()\nfunction hoisted() { return "up" }\nearly')).toBe('up')
  })

  test('a function hoisted in a run replaces the earlier definition from its first line', async () => {
    expect(await runAll('repl', 'function f() { return 1 }', 'const seen = f()\nfunction f() { return 2 }\nseen')).toBe(2)
  })

  test('hoisted functions keep their name and source text', async () => {
    expect(await runAll('repl', 'async function named(a) { return a }', '[named.name, String(named)]'))
      .toEqual(['named', 'async function named(a) { return a }'])
  })
})

describe('repl constants', () => {
  test('assigning a const throws a TypeError in sloppy code', async () => {
    const environment = new TestEnvironment('repl')
    await environment.run('const fixed = 1')
    const { error } = await environment.fail('fixed = 2')
    expect(error.name).toBe('TypeError')
    expect(error.message).toBe('Assignment to constant variable "fixed".')
    expect(await environment.run('fixed')).toBe(1)
  })

  test('assigning a const throws a TypeError in strict code', async () => {
    const environment = new TestEnvironment('repl')
    const { error } = await environment.fail('"use strict"\nconst fixed = 1\nfixed++')
    expect(error.name).toBe('TypeError')
  })

  test('a function from an earlier run cannot assign a const either', async () => {
    const environment = new TestEnvironment('repl')
    await environment.run('const limit = 1\nfunction raise() { limit = 2 }')
    expect((await environment.fail('raise()')).error.name).toBe('TypeError')
  })

  test('a const holding an object still allows mutating the object', async () => {
    expect(await runAll('repl', 'const box = { n: 1 }', 'box.n = 2; box.n')).toBe(2)
  })
})

describe('repl global semantics', () => {
  test('functions from an earlier run see the latest value of a top-level name', async () => {
    expect(await runAll('repl', 'let base = 1\nfunction read() { return base }', 'let base = 2', 'read()')).toBe(2)
  })

  test('functions from an earlier run call the latest definition of another function', async () => {
    expect(await runAll('repl', 'function g() { return 1 }\nfunction h() { return g() }', 'function g() { return 2 }', 'h()')).toBe(2)
  })

  test('assignments inside functions reach the global binding', async () => {
    expect(await runAll('repl', 'let count = 0\nfunction inc() { count++ }', 'inc(); inc(); count')).toBe(2)
  })

  test('a failed run keeps the declarations that ran before the failure', async () => {
    const environment = new TestEnvironment('repl')
    await environment.fail('let before = 1\nthrow new Error("stop")\nlet after = 2')
    expect(await environment.run('[before, typeof after]')).toEqual([1, 'undefined'])
  })

  test('a lexical declaration of a non-configurable global explains itself', async () => {
    const { error } = await new TestEnvironment('repl').fail('const undefined = 1')
    expect(error.message).toBe('Cannot declare "undefined": the global "undefined" cannot be redefined.')
  })

  test('a var or function may reuse a writable non-configurable global, as in a script', async () => {
    const environment = new TestEnvironment('repl')
    Object.defineProperty(environment.global, 'pinned', { value: 1, writable: true, configurable: false })
    expect(await environment.run('var pinned = 2; pinned')).toBe(2)
    expect(await environment.run('function pinned() { return 3 }\npinned()')).toBe(3)
  })
})

describe('repl syntax coverage', () => {
  test('labels, continue and break work at the top level', async () => {
    const source = 'let hits = 0\nouter: for (const a of [1, 2]) { for (const b of [1, 2]) { if (b === 2) continue outer; hits += await a } }\nhits'
    expect(await runAll('repl', source)).toBe(3)
  })

  test('for await over an async generator declared in an earlier run', async () => {
    expect(await runAll('repl', 'async function* gen() { yield 1; yield 2 }', 'let total = 0\nfor await (const x of gen()) total += x\ntotal')).toBe(3)
  })

  test('classes with fields, static blocks and private members', async () => {
    const source = 'class Counter { #n = 0; static made = 0; static { Counter.made = -1 } inc() { return ++this.#n } }\nconst c = new Counter(); c.inc(); [c.inc(), Counter.made]'
    expect(await runAll('repl', source)).toEqual([2, -1])
  })

  test('a class declaration can extend a class from an earlier run', async () => {
    expect(await runAll('repl', 'class A { hi() { return "A" } }', 'class B extends A {}\nnew B().hi()')).toBe('A')
  })

  test('a trailing line comment does not swallow the completion', async () => {
    expect(await runAll('repl', 'let x = await 1\nx // done')).toBe(1)
  })

  test('a run whose last statement is a declaration completes with undefined', async () => {
    expect(await runAll('repl', 'const z = await 1')).toBeUndefined()
  })

  test('programs without await are lowered too', async () => {
    expect(await runAll('repl', 'let plain = 1', 'plain + 1')).toBe(2)
  })

  test('statements relying on ASI keep their meaning after rewriting', async () => {
    expect(await runAll('repl', 'var x\n(function () { globalThis.called = true })()\nlet y = 1\n;[y]')).toEqual([1])
  })

  test('the Node REPL vectors behave as documented', async () => {
    const environment = new TestEnvironment('repl')
    await environment.run('function foo(x) { return x; }\nfunction koo() { return Promise.resolve(4); }')
    expect(await environment.run('await Promise.resolve(0)')).toBe(0)
    await environment.run('let [ii, { abc: { kk } }] = [0, { abc: { kk: 1 } }];')
    expect(await environment.run('[ii, kk]')).toEqual([0, 1])
    expect(await environment.run('foo(await koo())')).toBe(4)
    await environment.run('const n = foo(await\nkoo());')
    expect(await environment.run('n')).toBe(4)
    expect(await environment.run('class Foo {}; await 1;')).toBe(1)
    expect(await environment.run('typeof Foo')).toBe('function')
    await environment.run('let o = await 1, p')
    expect(await environment.run('p')).toBeUndefined()
    await environment.run('let q = 1, s = await 2')
    expect(await environment.run('s')).toBe(2)
  })

  test('declared lists every top-level name in source order', () => {
    const source = 'var a\nlet { b, c: [d = 1, ...e] } = {}\nfunction f() { var hidden }\nclass G {}\nfor (var h of []) {}\n{ let block }'
    expect(lowerProgram(source, 'repl').declared).toEqual(['a', 'b', 'd', 'e', 'f', 'G', 'h'])
  })
})
