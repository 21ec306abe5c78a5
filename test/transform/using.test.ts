import { describe, expect, test } from 'vitest'
import type { PtcProgramFormat } from '../../src/seam/types.js'
import { lowerProgram, ProgramSyntaxError } from '../../src/transform/index.js'
import { runAll, TestEnvironment } from './environment.js'

// V8 compiles `using` from Node 24 on. The runtime detects it by compiling a snippet; the tests
// hold it to the version it should find.
const nativeUsing = Number(process.versions.node.split('.')[0]) >= 24
const FORMATS: PtcProgramFormat[] = ['function-body', 'script', 'repl', 'scoped-repl']

/** A disposable that appends `name` to the global `disposed` list when it is disposed. */
const RESOURCE = `globalThis.disposed = []
globalThis.resource = (name) => ({ name, [Symbol.dispose]() { disposed.push(name) } })
globalThis.asyncResource = (name) => ({ name, async [Symbol.asyncDispose]() { await null; disposed.push(name) } })`

async function environmentWithResources(format: PtcProgramFormat): Promise<TestEnvironment> {
  const environment = new TestEnvironment(format)
  environment.evaluate(RESOURCE)
  return environment
}

describe.runIf(nativeUsing)('using declarations where Node runs them', () => {
  test.each(FORMATS)('%s: top-level using resources are disposed in reverse order when the run ends', async (format) => {
    const environment = await environmentWithResources(format)
    const completion = format === 'function-body' ? 'return' : ''
    const value = await environment.run(`using a = resource('a')\nawait using b = asyncResource('b')\nusing c = resource('c');\n${completion} [a.name, b.name, c.name, disposed.length]`)
    expect(value).toEqual(['a', 'b', 'c', 0])
    expect(environment.evaluate('disposed')).toEqual(['c', 'b', 'a'])
  })

  test.each(FORMATS)('%s: a run that throws still disposes its resources', async (format) => {
    const environment = await environmentWithResources(format)
    const { error } = await environment.fail("using a = resource('a')\nthrow new Error('boom')")
    expect(error.message).toBe('boom')
    expect(environment.evaluate('disposed')).toEqual(['a'])
  })

  test.each(['repl', 'scoped-repl'] as const)('%s: a top-level using binding belongs to its run; later runs do not see it', async (format) => {
    const environment = await environmentWithResources(format)
    await environment.run("let kept = 1\nusing handle = resource('h')")
    expect(await environment.run('[typeof handle, kept, disposed]')).toEqual(['undefined', 1, ['h']])
    expect(Object.keys(environment.global)).not.toContain('handle')
  })

  test.each(['repl', 'scoped-repl'] as const)('%s: a run may declare with using a name earlier runs declared', async (format) => {
    const environment = await environmentWithResources(format)
    await environment.run('let handle = 1')
    expect(await environment.run("using handle = resource('h')\nhandle.name")).toBe('h')
    // The run's own binding shadowed the earlier one, which is still there afterwards.
    expect(await environment.run('handle')).toBe(1)
  })

  test('repl: functions of the run close over its using binding, which is disposed when the run ends', async () => {
    const environment = await environmentWithResources('repl')
    await environment.run("using handle = resource('h')\nfunction handleName() { return handle.name }")
    expect(await environment.run('[handleName(), disposed]')).toEqual(['h', ['h']])
  })

  test('a disposer that throws fails the run with its error', async () => {
    const environment = await environmentWithResources('script')
    const { error } = await environment.fail("using a = { [Symbol.dispose]() { throw new Error('dispose failed') } }\n1")
    expect(error.message).toBe('dispose failed')
  })

  test.each(FORMATS)('%s: using in blocks, loops and functions is disposed at the end of its scope', async (format) => {
    const environment = await environmentWithResources(format)
    const completion = format === 'function-body' ? 'return' : ''
    const program = `{ using a = resource('block') }
for (using b of [resource('loop 1'), resource('loop 2')]) {}
async function inner() { await using c = asyncResource('function'); return disposed.length }
const during = await inner();
${completion} [during, disposed]`
    expect(await environment.run(program)).toEqual([3, ['block', 'loop 1', 'loop 2', 'function']])
  })

  test('lowering leaves a top-level using declaration as written, so positions map exactly', async () => {
    const environment = await environmentWithResources('repl')
    const { stack } = await environment.fail("using a = resource('a')\nusing b = resource(missing)")
    expect(stack).toMatch(/:2:20/)
  })
})

describe.skipIf(nativeUsing)('using declarations where Node cannot run them', () => {
  test.each(FORMATS)('%s: a top-level using is refused with the Node version it needs and its position', (format) => {
    const error = refusal('let a = 1\nusing handle = open()', format)
    expect(error.message).toMatch(/^SyntaxError: 'using' declarations need Node\.js 24 or later \(this runtime runs on Node\.js \d+\.\d+\.\d+\) \(line 2, column 1\)/)
    expect(error.message).toContain(process.versions.node)
  })

  test.each(FORMATS)('%s: await using inside a function is refused too', (format) => {
    const error = refusal('async function f() {\n  const x = 1\n  await using handle = open()\n}', format)
    expect(error.message).toMatch(/^SyntaxError: 'await using' declarations need Node\.js 24 or later .* \(line 3, column 3\)/)
  })

  test('the first using declaration in the program is the one reported', () => {
    expect(refusal('for (using x of []) {}\nfunction f() { { using y = 1 } }', 'script')).toMatchObject({ line: 1, column: 6 })
    expect(refusal('function f() { { using y = 1 } }\nfor (using x of []) {}', 'script')).toMatchObject({ line: 1, column: 18 })
  })

  test('a program that only spells using as a name still runs', async () => {
    expect(await runAll('repl', 'let using = 2\nconst obj = { using }\nusing * obj.using')).toBe(4)
  })
})

function refusal(source: string, format: PtcProgramFormat): ProgramSyntaxError {
  try {
    lowerProgram(source, format)
  } catch (error) {
    if (error instanceof ProgramSyntaxError) return error
    throw error
  }
  throw new Error(`expected a refusal:\n${source}`)
}
