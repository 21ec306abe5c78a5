import { describe, expect, test } from 'vitest'
import { lowerProgram, ProgramSyntaxError } from '../../src/transform/index.js'
import { runAll, TestEnvironment } from './environment.js'

describe('script completion values', () => {
  test('an awaited promise as the last statement completes with its value', async () => {
    expect(await runAll('script', 'await Promise.resolve({a:1})')).toEqual({ a: 1 })
  })

  test('a promise as the last expression is awaited by the caller', async () => {
    expect(await runAll('script', 'Promise.resolve(7)')).toBe(7)
  })

  test('object-literal-looking input is a block, as in vm.Script', async () => {
    expect(await runAll('script', '{a: 1}')).toBe(1)
  })

  test('a parenthesized object literal completes with the object', async () => {
    expect(await runAll('script', '({a: await 1})')).toEqual({ a: 1 })
  })

  test('a template literal completes with its string', async () => {
    expect(await runAll('script', '`status: ${(await Promise.resolve({ status: 200 })).status}`')).toBe('status: 200')
  })

  test('a comma expression completes with its last operand', async () => {
    expect(await runAll('script', 'await Promise.resolve(123), await Promise.resolve(456)')).toBe(456)
  })

  test('a trailing if completes with the value of the branch taken', async () => {
    expect(await runAll('script', 'const c = await true\nif (c) { "yes" } else { "no" }')).toBe('yes')
    expect(await runAll('script', 'const c = await false\nif (c) { "yes" } else { "no" }')).toBe('no')
  })

  test('a trailing if without a value completes with undefined', async () => {
    expect(await runAll('script', 'await 1; if (false) {}')).toBeUndefined()
  })

  test('a trailing try completes with the catch value when the try block throws', async () => {
    expect(await runAll('script', 'try { await Promise.reject(new Error("no")) } catch (e) { e.message }')).toBe('no')
  })

  test('a trailing try/finally completes with the try value, not the finally value', async () => {
    expect(await runAll('script', 'try { await 1 } finally { 2 }')).toBe(1)
  })

  test('a trailing block completes with its last value', async () => {
    expect(await runAll('script', '{ await 1; 2 }')).toBe(2)
  })

  test('a trailing loop completes with the last value its body produced', async () => {
    expect(await runAll('script', 'for (let i = 0; i < 3; i++) { await i; i * 10 }')).toBe(20)
  })

  test('a trailing declaration leaves the earlier value', async () => {
    expect(await runAll('script', '1; var x = await 2')).toBe(1)
  })

  test('a program that ends in a declaration completes with undefined', async () => {
    expect(await runAll('script', 'let x = await 2')).toBeUndefined()
  })

  test('a trailing line comment does not swallow the completion', async () => {
    expect(await runAll('script', 'const x = await 5\nx // done')).toBe(5)
  })

  test('a labelled block completes with the value before its break', async () => {
    expect(await runAll('script', 'a: { await 1; 2; break a; 3 }')).toBe(2)
  })

  test('a program without statements completes with undefined', async () => {
    expect(await runAll('script', '// nothing here\n')).toBeUndefined()
  })
})

describe('script top level', () => {
  test('for await iterates an async iterable at the top level', async () => {
    const source = 'async function* g() { yield 1; yield 2 }\nlet sum = 0\nfor await (const x of g()) sum += x\nsum'
    expect(await runAll('script', source)).toBe(3)
  })

  test('await works inside top-level blocks, loops and conditions', async () => {
    expect(await runAll('script', 'let t = 0\nif (await true) { for (const v of [1, 2]) t += await v }\nt')).toBe(3)
  })

  test('top-level return is a syntax error that says where the result comes from', () => {
    expect(() => lowerProgram('const x = 1\nreturn x', 'script')).toThrow(
      'return is not allowed at the top level of a script; the value of the last expression is the result (line 2, column 1)',
    )
  })

  test('return inside a top-level block is rejected too', () => {
    expect(() => lowerProgram('if (true) { return 1 }', 'repl')).toThrow(ProgramSyntaxError)
  })

  test('return inside a function is fine', async () => {
    expect(await runAll('script', 'function f() { return 4 }\nf()')).toBe(4)
  })

  test('a sloppy script may assign an undeclared name', async () => {
    expect(await runAll('script', 'implicit = 3\nimplicit')).toBe(3)
  })

  test('a use-strict directive makes the whole program strict', async () => {
    const environment = new TestEnvironment('script')
    const { error } = await environment.fail('"use strict"\nundeclared = 3')
    expect(error.name).toBe('ReferenceError')
  })

  test('a hashbang line is ignored', async () => {
    expect(await runAll('script', '#!/usr/bin/env node\n42')).toBe(42)
  })

  test('this at the top level is the global object', async () => {
    expect(await runAll('script', 'this === globalThis')).toBe(true)
  })

  test('dynamic import is available', async () => {
    expect(await runAll('script', 'const path = await import("node:path")\npath.basename("/a/b.txt")')).toBe('b.txt')
  })

  test('import declarations are rejected', () => {
    expect(() => lowerProgram('import fs from "fs"', 'script')).toThrow(ProgramSyntaxError)
  })
})
