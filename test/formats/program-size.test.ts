/**
 * The host parses and lowers every program on its own thread, so a program's length is bounded
 * before the host reads it: an 8 MB program held the host's event loop 11 s while other
 * conversations waited.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startRuntime } from '../helpers/runtime.js'

describe('maxProgramBytes', () => {
  let env: Awaited<ReturnType<typeof startRuntime>>
  beforeAll(async () => {
    env = await startRuntime({ isolation: 'thread', programFormat: 'repl', retainState: true, maxProgramBytes: 2048 })
  })
  afterAll(() => env.dispose())

  it('refuses an 8 MB program without parsing it, naming the option', async () => {
    // Not JavaScript: were it parsed, the run would fail as a syntax error instead.
    const result = await env.run(`return 1 +* ${'x'.repeat(8 * 1024 * 1024)}`)
    expect(result.error).toEqual({
      kind: 'exception',
      message: 'The program is over 2048 bytes; a program may be at most 2048 bytes (maxProgramBytes). Keep data out of the program: have it fetched by a tool call.',
    })
  })

  it('counts UTF-8 bytes, running a program of exactly the limit and refusing one byte more', async () => {
    // 1 019 two-byte characters in quotes, then `.length;`: 2 048 bytes in 1 029 characters.
    const exact = `'${'é'.repeat(1019)}'.length;`
    expect(Buffer.byteLength(exact)).toBe(2048)
    expect((await env.run(exact)).value).toBe(1019)
    const over = `${exact} `
    expect(over.length).toBeLessThan(2048)
    expect((await env.run(over)).error?.message).toMatch(/^The program is 2049 bytes; a program may be at most 2048 bytes \(maxProgramBytes\)/)
  })

  it('leaves a retained owner’s state as it was', async () => {
    const owner = {}
    expect((await env.run('var kept = 41', { stateOwner: owner })).error).toBeUndefined()
    expect((await env.run(`kept = 0 // ${'x'.repeat(4096)}`, { stateOwner: owner })).error?.message).toMatch(/maxProgramBytes/)
    const next = await env.run('kept + 1', { stateOwner: owner })
    expect(next.value).toBe(42)
    expect(next.output).toEqual([])
  })

  it('is refused below 1024 bytes when the runtime is made', async () => {
    await expect(startRuntime({ isolation: 'thread', maxProgramBytes: 100 })).rejects.toThrow(/maxProgramBytes/)
  })
})
