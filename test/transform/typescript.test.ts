import { createRequire } from 'node:module'
import { describe, expect, test } from 'vitest'
import { eraseTypes, eraseTypesAwaiting, lowerProgram, PositionMap, ProgramSyntaxError, type TypeEraser } from '../../src/transform/index.js'
import { TestEnvironment } from './environment.js'

const swc = createRequire(import.meta.url)('@swc/wasm-typescript') as { transformSync(source: string, options: object): { code: string } }
const eraser: TypeEraser = (source) => swc.transformSync(source, { mode: 'strip-only', deprecatedTsModuleAsError: true }).code

const FORMATS = ['function-body', 'script', 'repl', 'scoped-repl'] as const
const RESULT = { 'function-body': 'return ', script: '', repl: '', 'scoped-repl': '' } as const

/** A TestEnvironment whose programs are TypeScript. */
class TypeScriptEnvironment extends TestEnvironment {
  override lower(source: string) {
    const lowered = lowerProgram(source, this.format, { carried: this.carried, erased: eraseTypes(source, eraser) })
    if (this.format === 'scoped-repl') this.carried = [...new Set([...this.carried, ...lowered.declared])]
    this.maps.push(new PositionMap(structuredClone(lowered.positions)))
    return lowered
  }
}

function programFrames(stack: string): string[] {
  return [...stack.matchAll(/program\.js[^\s):]*:\d+:\d+/g)].map((match) => match[0])
}

function syntaxError(source: string, format: (typeof FORMATS)[number]): ProgramSyntaxError {
  try {
    lowerProgram(source, format, { erased: eraseTypes(source, eraser) })
  } catch (error) {
    if (error instanceof ProgramSyntaxError) return error
    throw error
  }
  throw new Error('expected a syntax error')
}

describe.each(FORMATS)('%s: TypeScript programs', (format) => {
  test('run with annotations, interfaces, type aliases, as, generics, satisfies and non-null assertions', async () => {
    const source = [
      'interface City { name: string; highC: number }',
      'type Names = string[]',
      'const cities: City[] = [{ name: "Oslo", highC: 14 }, { name: "Lima", highC: 22 }] as City[]',
      'function warmest<T extends City>(list: T[]): T { return [...list].sort((a, b) => b.highC - a.highC)[0]! }',
      'const limits = { min: 10 } satisfies Record<string, number>',
      'const names: Names = cities.map((city: City): string => city.name);',
      `${RESULT[format]}[warmest<City>(cities).name, names.length, limits.min] as const`,
    ].join('\n')
    expect(await new TypeScriptEnvironment(format).run(source)).toEqual(['Lima', 2, 10])
  })

  test('an error keeps its line and column after the types before it on the same line are erased', async () => {
    const source = 'const a: number = 1\nconst b: Array<string> = [] as string[]; const c = (a as number) satisfies number; throw new Error("x")'
    const { stack } = await new TypeScriptEnvironment(format).fail(source)
    expect(programFrames(stack)).toEqual([`program.js:2:${source.split('\n')[1]!.indexOf('new Error') + 1}`])
  })

  test('a typed async arrow in a Markdown fence is called', async () => {
    const source = '```ts\nasync (): Promise<number> => {\n  const n: number = await Promise.resolve(41)\n  return n + 1\n}\n```'
    expect(await new TypeScriptEnvironment(format).run(source)).toBe(42)
  })

  test('a typed anonymous async function is called', async () => {
    expect(await new TypeScriptEnvironment(format).run('async function (): Promise<string> {\n  return "ok" as string\n}')).toBe('ok')
  })

  test('a type syntax error names the program’s own line and column', () => {
    expect(syntaxError('const a = 1\nlet x: = 2', format)).toMatchObject({ line: 2, column: 8 })
  })

  test('a column after wide characters is counted in the program’s own characters', () => {
    expect(syntaxError('const s = "日本"; let x: = 2', format)).toMatchObject({ line: 1, column: 24 })
  })

  test('an enum is refused as a syntax error saying only types are erased', () => {
    const error = syntaxError('const a = 1\nenum Color { Red }', format)
    expect(error).toMatchObject({ line: 2, column: 1 })
    expect(error.message).toMatch(/^SyntaxError: TypeScript enum is not supported \(only types are erased\) \(line 2, column 1\)/)
  })

  test('plain JavaScript is unchanged', async () => {
    expect(await new TypeScriptEnvironment(format).run(`const a = 1 < 2\n${RESULT[format]}a`)).toBe(true)
  })
})

test('top-level return in a script-like TypeScript program is refused as in JavaScript', () => {
  expect(() => lowerProgram('const x: number = 1\nreturn x', 'script', { erased: eraseTypes('const x: number = 1\nreturn x', eraser) })).toThrow(/return is not allowed at the top level of a script/)
})

test('an eraser failure without a position is a syntax error of the program, not a crash', () => {
  const broken: TypeEraser = () => {
    throw 'panicked'
  }
  expect(() => eraseTypes('let a: number = 1', broken)).toThrow(
    new ProgramSyntaxError('SyntaxError: TypeScript could not be erased: panicked (line 1, column 1)\nlet a: number = 1\n^', 1, 1),
  )
})

test('an awaited eraser erases as one called: the same attempts, the same text, the same errors at the same positions', async () => {
  const awaited = (source: string) => Promise.resolve().then(() => eraser(source))
  for (const source of ['async function (): Promise<number> { return 1 }', '```ts\nconst a: number = 1\n```', 'function () {}\nlet x: number = 1', 'const a = 1\nlet b: = 2']) {
    const called = (() => {
      try {
        return eraseTypes(source, eraser)
      } catch (error) {
        return error
      }
    })()
    expect(await eraseTypesAwaiting(source, awaited).catch((error: unknown) => error)).toEqual(called)
  }
})
