/**
 * Differential check: for programs without top-level await, `script` and `repl` lowering must
 * give the completion value and top-level bindings `vm.Script` gives on a fresh context.
 */
import vm from 'node:vm'
import { describe, expect, test } from 'vitest'
import { lowerProgram } from '../../src/transform/index.js'
import { TestEnvironment } from './environment.js'

const PROGRAMS = [
  '1',
  '1; 2',
  '1; var x = 2',
  '1; if (false) {}',
  '1; if (true) {}',
  '1; if (true) { 2 }',
  'if (0) { 1 } else { 2 }',
  'if (1) { 1 } else { 2 }',
  'if (true) 3; else 4',
  'if (false) ; else 4',
  '{a: 1}',
  '({a: 1})',
  '{ 1; 2 }',
  '1; {}',
  '1; { var y = 3 }',
  '`t${1 + 1}`',
  '1, 2, 3',
  'var x = 1; x++',
  'var x = 1; x++; x',
  'let a = 1, b = 2; a + b',
  'const [p, , q = 3, ...r] = [1, 2, undefined, 4, 5]; [p, q, r]',
  'const { a, b: [c, , d = 4] = [], ...rest } = { a: 1, b: [5, 6], e: 7 }',
  'let {x: {y: [z = 1] = []} = {}} = {}; z',
  'function f() { return 1 } f()',
  'f(); function f() { return 2 }',
  'class A { static m() { return 3 } } A.m()',
  'class A {}; 5',
  'for (var i = 0; i < 3; i++) i * 2',
  'for (var i = 0; i < 3; i++) { if (i == 1) break; i }',
  'for (let i = 0; i < 3; i++) {}',
  '1; for (var i = 0; i < 0; i++) 5',
  'var n = 0; while (n < 5) n++',
  'var n = 0; do { n += 2 } while (n < 5)',
  'for (var k in {a: 1, b: 2}) k',
  'for (var [k, v] of Object.entries({a: 1})) v',
  'for (const v of [1, 2, 3]) v * 10',
  '1; switch (2) { case 1: 10; break; case 2: 20; case 3: 30 }',
  'switch (1) { case 1: 10; break }',
  '1; switch (5) { case 1: 10 }',
  'switch (3) { default: 5; case 1: 6 }',
  'try { 1 } finally { 2 }',
  'try { throw 1 } catch (e) { e + 1 }',
  '1; try { throw 1 } catch { }',
  'try { 3 } catch (e) { 4 } finally { 5 }',
  '1; try { } finally { 9 }',
  '1; try { 2 } catch {} finally { if (true) {} }',
  'a: { 1; break a; 2 }',
  '1; a: { break a }',
  '1; label: for (;;) break label',
  'outer: for (var i = 0; i < 3; i++) { for (var j = 0; j < 3; j++) { if (j == 1) continue outer; i * 10 + j } }',
  'var i = 0; while (true) { if (i++ > 2) break; i }',
  'var i = 0; while (true) { i++; if (i > 2) break }',
  'do { 5; break } while (false)',
  'do { 5; continue } while (false)',
  'var count = 0; for (const x of [1, 2, 3]) { if (x === 2) continue; count += x }',
  'for (var i = 0; i < 2; i++) { if (i) { } else { 7 } }',
  'while (false) for (;;) 1',
  'var w = 0; while (w++ < 2) while (false) 9',
  'x = 5',
  'var o = {a: 1}; with (o) { a + 1 }',
  '"use strict"; var s = 1; s',
  '"str"',
  '"use strict"',
  'void 0',
  'null',
  'typeof undefined',
  'var re = /ab+c/g; re.source',
  'label: 1',
  '1; debugger;',
  'var fn = function () { return 1 }; fn.name',
  'let arrow = () => 2; arrow.name',
  'const k = class {}; k.name',
  'function* g() { yield 1; yield 2 } [...g()]',
  'async function af() { return 1 }; typeof af',
  'var a = 1, b; [a, b]',
  'let u; u',
  'var v = 1; var v; v',
  'this === globalThis',
  'typeof arguments',
  '1; function h() {}',
  '1; class K {}',
  '1; let w = 2',
  '1; ;',
  'if (true) { function blockFn() { return 7 } } blockFn()',
  '{ function inner() { return 8 } } inner()',
  'var x = 1; { let x = 2; x }',
  'try { null.f } catch (e) { e instanceof TypeError }',
  '1; while (false);',
  '1; if (true) { var q = 1 }',
  'let i = 0; for (;;) { if (++i > 3) break; }',
  '1\n2 // trailing',
  '[1, 2].map(x => x * 2)',
  'var x\n(function () { return 1 })()',
  'var a = 1\n;[a]',
  'x = 1; delete x',
  'var o2 = {}; o2.a = 1; o2',
  'let a\n{ 4 }',
  'const c1 = 1\nif (c1) c1 + 1',
  'function rec(n) { return n ? n + rec(n - 1) : 0 } rec(4)',
  'var let_ = 1; let_',
  'var async = 2; for (var async of [3]); async',
  '"a" + "b"\n// comment at the end',
  'let s2 = 0; for (var z = 0; z < 3; z++) s2 += z; s2',
]

function describeValue(value: unknown): unknown {
  if (typeof value === 'function') return `function ${value.name}: ${String(value)}`
  if (Array.isArray(value)) return value.map(describeValue)
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, describeValue(item)]))
  }
  return value
}

function readBinding(context: vm.Context, name: string): unknown {
  try {
    return describeValue(vm.runInContext(name, context))
  } catch (error) {
    return `throws ${(error as Error).name}`
  }
}

function reference(source: string, names: string[]) {
  const context = vm.createContext({})
  const completion = new vm.Script(source).runInContext(context)
  return { completion: describeValue(completion), bindings: names.map((name) => readBinding(context, name)) }
}

describe.each(['script', 'repl'] as const)('%s lowering agrees with vm.Script', (format) => {
  test.each(PROGRAMS)('%s', async (source) => {
    const { declared } = lowerProgram(source, format)
    const expected = reference(source, declared)
    const environment = new TestEnvironment(format)
    const completion = await environment.run(source)
    expect({
      completion: describeValue(completion),
      bindings: declared.map((name) => readBinding(environment.context, name)),
    }).toEqual(expected)
  })
})
