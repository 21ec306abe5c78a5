/**
 * The host erases every conversation's TypeScript with one eraser: a program that breaks it
 * (its WebAssembly stack overflows, its memory is left corrupt) must cost only that program.
 */
import { readFileSync } from 'node:fs'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startRuntime } from '../helpers/runtime.js'
import { longestStall } from '../helpers/stall.js'

/** Programs that overflow the eraser's own stack, each nested past what it survives. */
const BOMBS: Record<string, string> = {
  'a generic nested 3 000 deep': `const x: ${'Array<'.repeat(3000)}number${'>'.repeat(3000)} = 1\nreturn x`,
  'a union type in parentheses 5 000 deep': `let x: ${'('.repeat(5000)}number${')'.repeat(5000)} = 1\nreturn x`,
  'if statements nested 5 000 deep': `${'if (a) '.repeat(5000)};\nreturn 1`,
  'a unary chain 50 000 long': `const x: number = ${'!'.repeat(50_000)}1 ? 1 : 0\nreturn x`,
}

/**
 * Valid TypeScript of 64 KB that SWC backtracks over: each `a<` is first tried as type arguments
 * running to the program's end. On the host's thread it held every conversation for 6-9 s.
 */
function backtracking(): string {
  let program = 'const f = (...x: number[]) => x.length, a = 1, b = 2\nreturn f('
  const group = `a<${'b,'.repeat(55)}`
  while (program.length + group.length < 65_000) program += group
  return `${program}1)`
}

/** A short program SWC backtracks over: each `a <` of the call is first tried as type arguments. */
const SHORT_BACKTRACKING = `f(${Array(620).fill('a < b').join(', ')})\nreturn 1`

/** Threads of this process, the eraser's among them. */
const threads = () => Number(/^Threads:\s+(\d+)/m.exec(readFileSync('/proc/self/status', 'utf8'))![1])

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

  it('ends each broken eraser: a program that breaks it over and over does not grow the host', async () => {
    await env.run(BOMBS['a generic nested 3 000 deep']!)
    await new Promise((resolve) => setTimeout(resolve, 200))
    const before = threads()
    for (let round = 0; round < 25; round++) expect((await env.run(BOMBS['a generic nested 3 000 deep']!)).error?.kind).toBe('exception')
    await new Promise((resolve) => setTimeout(resolve, 500))
    // Each broken eraser's thread (and its 3.7 MB of WebAssembly memory) is gone: at most the one serving now is new.
    expect(threads() - before).toBeLessThanOrEqual(1)
  })

  it('fails a program the eraser backtracks over at the eraser’s deadline, while the host’s loop and another conversation go on and the next program erases', async () => {
    const { result, stallMs } = await longestStall(async () => {
      const settled = (run: Promise<unknown>) => run.then(() => performance.now())
      const hostile = env.run(backtracking(), { stateOwner: {} })
      const bystander = env.run('await new Promise((resolve) => setTimeout(resolve, 10))\nreturn 2', { language: 'javascript' })
      const [hostileAt, bystanderAt] = await Promise.all([settled(hostile), settled(bystander)])
      return { hostile: await hostile, bystander: await bystander, bystanderFirst: bystanderAt < hostileAt }
    })
    expect(result.hostile.error?.kind).toBe('exception')
    expect(result.hostile.error?.message).toMatch(/^SyntaxError: TypeScript could not be erased: the eraser did not finish within its budget of 84 ms of its CPU time for a program of 64 KiB/)
    // The host awaits the eraser's thread: its loop is never held for the deadline (it was for
    // 250-285 ms, and 6-9 s on its own thread). Its loop works a few ms of the run; the bound
    // leaves room for a loaded machine's scheduling, which alone stalled it 50-160 ms at times.
    expect(stallMs).toBeLessThan(125)
    expect(result.bystander.value).toBe(2)
    expect(result.bystanderFirst).toBe(true)
    expect((await env.run(GOOD, { stateOwner: {} })).value).toEqual(['Oslo'])
  })

  it('ends a TypeScript run waiting behind hostile programs at its time budget or its abort, and disposal does not wait for the queue', async () => {
    const hostile = await startRuntime({ language: 'typescript', isolation: 'thread', timeoutMs: 10_000, maxProgramBytes: 1024 * 1024 })
    const queued = Array.from({ length: 24 }, () => hostile.run(backtracking(), { stateOwner: {} }))
    const started = performance.now()
    // Programs not erased before: a program's erasure is kept, and one sent again does not wait.
    const timedOut = env.run(`${GOOD} // waits for its budget`, { stateOwner: {}, timeoutMs: 400 })
    const stop = new AbortController()
    const aborted = env.run(`${GOOD} // waits to be stopped`, { stateOwner: {}, signal: stop.signal })
    setTimeout(() => stop.abort(new Error('the user pressed stop')), 200)
    const ended = async (run: Promise<{ error?: { kind: string; message: string } }>) => ({ error: (await run).error, at: performance.now() - started })
    const [late, stopped] = await Promise.all([ended(timedOut), ended(aborted)])
    // 24 programs ahead of them hold the eraser at least 24 x 84 ms of its CPU time.
    expect(late.error?.kind).toBe('timeout')
    expect(late.error?.message).toMatch(/time budget of 400 ms \(timeoutMs\)/)
    expect(late.at).toBeLessThan(1000)
    expect(stopped.error).toEqual({ kind: 'abort', message: 'the user pressed stop' })
    expect(stopped.at).toBeLessThan(1000)
    const disposing = performance.now()
    await hostile.dispose()
    expect(performance.now() - disposing).toBeLessThan(1000)
    for (const run of await Promise.all(queued)) expect(run.error?.kind).toMatch(/^(abort|exception)$/)
    expect((await env.run(GOOD, { stateOwner: {} })).value).toEqual(['Oslo'])
  })

  it('runs a TypeScript program sent again without waiting for the eraser, busy with hostile programs', async () => {
    expect((await env.run(GOOD, { stateOwner: {} })).value).toEqual(['Oslo'])
    const hostile = await startRuntime({ language: 'typescript', isolation: 'thread', timeoutMs: 10_000, maxProgramBytes: 1024 * 1024 })
    try {
      const queued = Array.from({ length: 12 }, () => hostile.run(backtracking(), { stateOwner: {} }))
      const started = performance.now()
      // Twelve programs ahead of it hold the eraser at least 1 s; its erasure was kept.
      expect((await env.run(GOOD, { stateOwner: {} })).value).toEqual(['Oslo'])
      expect(performance.now() - started).toBeLessThan(750)
      await Promise.all(queued)
    } finally {
      await hostile.dispose()
    }
  })

  it('stops a short program the eraser backtracks over at a short program’s budget of its CPU time, so twelve hold another conversation’s TypeScript well under their former deadlines', async () => {
    const hostile = await startRuntime({ language: 'typescript', isolation: 'thread', timeoutMs: 60_000 })
    try {
      const queued = Array.from({ length: 12 }, (_, index) => hostile.run(`${SHORT_BACKTRACKING} // ${index}`))
      await new Promise((resolve) => setTimeout(resolve, 10))
      const started = performance.now()
      const bystander = await env.run(`const waited: number = 41 // behind twelve\nreturn waited + 1`, { stateOwner: {} })
      const waited = performance.now() - started
      expect(bystander.value).toBe(42)
      for (const run of await Promise.all(queued)) {
        expect(run.error?.kind).toBe('exception')
        expect(run.error?.message).toMatch(/did not finish within its budget of 25 ms of its CPU time for a program of 5 KiB/)
      }
      // Each held the eraser 250 ms of the clock before (3.0-3.8 s for twelve, a bystander's 3 s budget
      // ran out); now 25 ms of its CPU time, and the next takes a spare already loaded: 1.2 s under load.
      expect(waited).toBeLessThan(12 * 250)
    } finally {
      await hostile.dispose()
    }
  })

  it("runs an owner's programs in the order they arrived, though a TypeScript one waits for the eraser and a later one does not", async () => {
    const hostile = await startRuntime({ language: 'typescript', isolation: 'thread', timeoutMs: 10_000, maxProgramBytes: 1024 * 1024 })
    const owned = await startRuntime({ language: 'typescript', isolation: 'thread', retainState: true, timeoutMs: 10_000 })
    try {
      const queued = Array.from({ length: 4 }, () => hostile.run(backtracking()))
      const owner = {}
      // The first erases behind four hostile programs; the second is JavaScript, which needs no eraser.
      const first = owned.run('const total: number = 1\nglobalThis.total = total\nreturn total', { stateOwner: owner })
      const second = owned.run('return globalThis.total + 1', { stateOwner: owner, language: 'javascript' })
      expect((await first).value).toBe(1)
      expect((await second).value).toBe(2)
      await Promise.all(queued)
    } finally {
      await owned.dispose()
      await hostile.dispose()
    }
  })

  it('erases a TypeScript environment initializer as it is registered, throwing its syntax error there at its position', async () => {
    const bad = await startRuntime({ language: 'typescript', isolation: 'thread', timeoutMs: 10_000 })
    try {
      expect(() => bad.runtime.registerEnvironmentInitializer('const a = 1\nlet b: = 2')).toThrow(/\(line 2, column 8\)/)
    } finally {
      await bad.dispose()
    }
    const good = await startRuntime({ language: 'typescript', isolation: 'thread', timeoutMs: 10_000 })
    try {
      good.runtime.registerEnvironmentInitializer('globalThis.high = ((n: number): string => `${n} °C`)(14)')
      expect((await good.run('return high')).value).toBe('14 °C')
    } finally {
      await good.dispose()
    }
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
