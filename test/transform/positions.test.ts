import { describe, expect, test } from 'vitest'
import { lowerProgram, PositionMap } from '../../src/transform/index.js'
import { mapStackPositions } from './stack-text.js'
import { TestEnvironment } from './environment.js'

const FORMATS = ['function-body', 'script', 'repl', 'scoped-repl'] as const

/** `program.js:L:C` of the first occurrence of `needle` in `source` (1-based, as V8 prints). */
function positionOf(source: string, needle: string): string {
  const lines = source.split(/\r\n?|\n/)
  const line = lines.findIndex((text) => text.includes(needle))
  return `program.js:${line + 1}:${lines[line]!.indexOf(needle) + 1}`
}

/** The `program.js:L:C` positions in a mapped stack, top frame first. */
function programFrames(stack: string): string[] {
  return [...stack.matchAll(/program\.js[^\s):]*:\d+:\d+/g)].map((match) => match[0])
}

describe.each(FORMATS)('%s: thrown errors map to the program as written', (format) => {
  test('an error created on line 3 maps to line 3 and its column', async () => {
    const source = 'const a = 1\nconst b = 2\n    throw new Error("x")'
    const { stack } = await new TestEnvironment(format).fail(source)
    expect(programFrames(stack)).toEqual([positionOf(source, 'new Error')])
  })

  test('columns stay exact after lowering edits earlier on the same line', async () => {
    const source = '1\n2\nlet a = 1; const { b } = { b: 2 }; var c; class D {}; a + b; throw new Error("x")'
    const { stack } = await new TestEnvironment(format).fail(source)
    expect(programFrames(stack)).toEqual([positionOf(source, 'new Error')])
  })

  test('frames inside functions keep their positions', async () => {
    const source = 'function outer() {\n  return inner()\n}\nfunction inner() {\n  throw new Error("deep")\n}\nouter()'
    const { stack } = await new TestEnvironment(format).fail(source)
    expect(programFrames(stack)).toEqual([
      positionOf(source, 'new Error'), positionOf(source, 'inner()'), 'program.js:7:1',
    ])
  })

  test('CRLF line breaks count as one line', async () => {
    const source = 'const a = 1\r\nconst b = 2\r\n  throw new Error("x")'
    const { stack } = await new TestEnvironment(format).fail(source)
    expect(programFrames(stack)).toEqual(['program.js:3:9'])
  })
})

describe.each(['script', 'repl', 'scoped-repl'] as const)('%s: functions from earlier runs', (format) => {
  test('an error inside a function declared in an earlier run maps to that run’s program', async () => {
    const environment = new TestEnvironment(format)
    const first = 'let unused = 1\n\nfunction boom() {\n  throw new Error("deep")\n}'
    await environment.run(first)
    const { stack } = await environment.fail('1\nboom()')
    expect(programFrames(stack)).toEqual([positionOf(first, 'new Error'), 'program.js:2:1'])
  })

  test('an error in an arrow created by an earlier run maps to that run’s program', async () => {
    const environment = new TestEnvironment(format)
    const first = 'let x = 1; var f = () => { throw new Error("arrow") }'
    await environment.run(first)
    const { stack } = await environment.fail('f()')
    expect(programFrames(stack)[0]).toBe(positionOf(first, 'new Error'))
  })
})

describe('mapStackPositions', () => {
  const lowered = lowerProgram('let a = 1\nthrow new Error("x")', 'scoped-repl')
  const map = new PositionMap(lowered.positions)
  const file = lowered.positions.file

  test('frames that point into wrapper code are dropped', () => {
    const stack = `Error: x\n    at ${file}:3:7\n    at async ${file}:1:40\n    at run (node:internal/x:1:1)`
    expect(mapStackPositions(stack, map)).toBe('Error: x\n    at program.js:2:7\n    at run (node:internal/x:1:1)')
  })

  test('frames of a run without a map keep their function name and lose their position', () => {
    expect(mapStackPositions('Error\n    at f (program.js?zzz:9:9)', map)).toBe('Error\n    at f (program.js)')
  })

  test('untagged positions (a stack formatted without source URLs) map with the current map', () => {
    expect(mapStackPositions('Error: x\n    at program.js:3:7', map)).toBe('Error: x\n    at program.js:2:7')
  })

  test('frames of earlier runs map with their own run’s map', () => {
    const earlier = lowerProgram('\n\nfunction f() {\n  boom()\n}', 'repl')
    const lines = earlier.code.split('\n')
    const line = lines.findIndex((text) => text.includes('boom()'))
    const frame = `${earlier.positions.file}:${line + 1}:${lines[line]!.indexOf('boom()') + 1}`
    const stack = `Error\n    at f (${frame})\n    at ${file}:3:1`
    expect(mapStackPositions(stack, map, [new PositionMap(earlier.positions)])).toBe('Error\n    at f (program.js:4:3)\n    at program.js:2:1')
  })

  test('a compile-error header line maps its line', () => {
    expect(mapStackPositions(`${file}:3\nfoo bar\n    ^^^`, map)).toBe('program.js:2\nfoo bar\n    ^^^')
  })

  test('text without program positions is returned unchanged', () => {
    expect(mapStackPositions('Error: nothing here\n    at x (other.js:1:1)', map)).toBe('Error: nothing here\n    at x (other.js:1:1)')
  })

  test('a file name that merely ends in program.js is left alone', () => {
    expect(mapStackPositions('at /srv/myprogram.js:3:7', map)).toBe('at /srv/myprogram.js:3:7')
  })
})

describe('PositionMap', () => {
  test('maps every column of verbatim program text exactly', () => {
    const source = 'const value = 1\n  + 2'
    const lowered = lowerProgram(source, 'function-body')
    const map = new PositionMap(lowered.positions)
    const generated = lowered.code.split('\n')
    for (const [line, text] of source.split('\n').entries()) {
      for (let column = 0; column < text.length; column++) {
        const original = map.original(line + 2, column + 1)
        expect(original).toEqual({ line: line + 1, column: column + 1 })
        expect(generated[line + 1]![column]).toBe(text[column])
      }
    }
  })

  test('maps inserted code to the program position it belongs to', () => {
    const lowered = lowerProgram('x\nlet y = 2', 'repl')
    const map = new PositionMap(lowered.positions)
    const line = lowered.code.split('\n')[2]!
    expect(map.original(3, line.indexOf('__ptc__.lexical') + 1)).toEqual({ line: 2, column: 1 })
    expect(map.original(3, line.indexOf('y = 2') + 1)).toEqual({ line: 2, column: 5 })
  })

  test('the wrapper line maps to nothing', () => {
    const lowered = lowerProgram('1', 'script')
    expect(new PositionMap(lowered.positions).original(1, 1)).toBeUndefined()
  })

  test('positions survive JSON and structured cloning', () => {
    const { positions } = lowerProgram('let a = 1\nfunction f() {}\na', 'repl')
    expect(JSON.parse(JSON.stringify(positions))).toEqual(positions)
    expect(structuredClone(positions)).toEqual(positions)
  })

  test('a lowered program names itself after its content', () => {
    const once = lowerProgram('1', 'repl')
    expect(lowerProgram('1', 'repl').positions.file).toBe(once.positions.file)
    expect(lowerProgram('2', 'repl').positions.file).not.toBe(once.positions.file)
    expect(once.code.endsWith(`//# sourceURL=${once.positions.file}`)).toBe(true)
  })
})
