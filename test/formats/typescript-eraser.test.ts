/**
 * The host erases every conversation's TypeScript with one eraser: a program that breaks it
 * (its WebAssembly stack overflows, its memory is left corrupt) must cost only that program.
 */
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startRuntime } from '../helpers/runtime.js'

/** Programs that overflow the eraser's own stack, each nested past what it survives. */
const BOMBS: Record<string, string> = {
  'a generic nested 3 000 deep': `const x: ${'Array<'.repeat(3000)}number${'>'.repeat(3000)} = 1\nreturn x`,
  'a union type in parentheses 5 000 deep': `let x: ${'('.repeat(5000)}number${')'.repeat(5000)} = 1\nreturn x`,
  'if statements nested 5 000 deep': `${'if (a) '.repeat(5000)};\nreturn 1`,
  'a unary chain 50 000 long': `const x: number = ${'!'.repeat(50_000)}1 ? 1 : 0\nreturn x`,
}

const GOOD = 'const highs: Array<{ city: string; highC: number }> = [{ city: "Oslo", highC: 14 }]\nreturn highs.map((day): string => day.city)'

describe('TypeScript erasure cannot be poisoned', () => {
  let env: Awaited<ReturnType<typeof startRuntime>>
  beforeAll(async () => {
    // maxProgramBytes over the eraser's own size bound, so that bound is what a long program meets.
    env = await startRuntime({ language: 'typescript', isolation: 'thread', timeoutMs: 10_000, maxProgramBytes: 1024 * 1024 })
  })
  afterAll(() => env.dispose())

  it.each(Object.entries(BOMBS))('%s fails as its own exception, and the next conversation’s TypeScript still runs', async (_, bomb) => {
    const broken = await env.run(bomb, { stateOwner: {} })
    expect(broken.error?.kind).toBe('exception')
    expect(broken.error?.message).toMatch(/^SyntaxError: TypeScript could not be erased: /)
    const other = await env.run(GOOD, { stateOwner: {} })
    expect(other.error).toBeUndefined()
    expect(other.value).toEqual(['Oslo'])
  })

  it('keeps erasing after many breaks in a row', async () => {
    for (let round = 0; round < 4; round++) expect((await env.run(BOMBS['a generic nested 3 000 deep']!)).error?.kind).toBe('exception')
    expect((await env.run(GOOD)).value).toEqual(['Oslo'])
    // Its syntax errors still carry the program's own position after the instance was replaced.
    expect((await env.run('const a = 1\nlet b: = 2')).error?.message).toMatch(/\(line 2, column 8\)/)
  })

  it('frees each broken eraser: a program that breaks it over and over does not grow the host', async () => {
    setFlagsFromString('--expose-gc')
    const collect = runInNewContext('gc') as () => void
    await env.run(BOMBS['a generic nested 3 000 deep']!)
    collect()
    const before = process.memoryUsage().external
    for (let round = 0; round < 25; round++) expect((await env.run(BOMBS['a generic nested 3 000 deep']!)).error?.kind).toBe('exception')
    await new Promise((resolve) => setTimeout(resolve, 200))
    collect()
    collect()
    // Each instance holds about 3.7 MB outside the JavaScript heap; 25 kept ones would be about 90 MB.
    expect((process.memoryUsage().external - before) / 2 ** 20).toBeLessThan(25)
  })

  it('refuses brackets nested past the bound before erasing, naming the rule', async () => {
    const result = await env.run(`const x = ${'['.repeat(300)}1${']'.repeat(300)}\nreturn x`)
    expect(result.error?.kind).toBe('exception')
    expect(result.error?.message).toMatch(/brackets in a TypeScript program may nest at most 256 deep; this one nests 30\d deep/)
  })

  it('refuses a program over the size bound before erasing, naming the rule', async () => {
    const result = await env.run(`const s: string = "${'x'.repeat(300 * 1024)}"\nreturn s.length`)
    expect(result.error?.kind).toBe('exception')
    expect(result.error?.message).toMatch(/a TypeScript program may have at most 262144 characters; this one has \d+/)
    // The same program as JavaScript is not the eraser's business.
    expect((await env.run(`const s = "${'x'.repeat(300 * 1024)}"\nreturn s.length`, { language: 'javascript' })).value).toBe(300 * 1024)
  })
})
