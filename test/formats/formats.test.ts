import { describe, expect, it } from 'vitest'
import type { PtcProgramFormat } from 'ptc-runtime'
import { CONFINED, startRuntime, textOf } from '../helpers/runtime.js'

async function session(format: PtcProgramFormat, retainState = true) {
  const env = await startRuntime({ programFormat: format, retainState, timeoutMs: 10_000 })
  const owner = {}
  return {
    ...env,
    call: (program: string) => env.run(program, { stateOwner: owner }),
  }
}

describe('script format', () => {
  it('yields the final expression, awaited, and supports declarations and for await', async () => {
    const { run, dispose } = await session('script', false)
    try {
      expect((await run('const a = 20\nlet b = 22\na + b // the answer')).value).toBe(42)
      expect((await run('await Promise.resolve({ a: 1 })')).value).toEqual({ a: 1 })
      expect((await run('async function* g() { yield 1; yield 2 }\nlet s = 0\nfor await (const v of g()) s += v\ns')).value).toBe(3)
      expect((await run('if (true) { "then" } else { "else" }')).value).toBe('then')
      expect((await run('const { a, b: [c, , d = 4] = [], ...rest } = { a: 1, b: [3], e: 5 };\n[a, c, d, rest]')).value).toEqual([1, 3, 4, { e: 5 }])
    } finally {
      await dispose()
    }
  })

  it('rejects top-level return as a syntax error with a clear message', async () => {
    const { run, dispose } = await session('script', false)
    try {
      const result = await run('const x = 1\nreturn x')
      expect(result.error?.kind).toBe('exception')
      expect(result.error?.message).toMatch(/return/)
      expect(result.error?.message).toMatch(/line 2/)
    } finally {
      await dispose()
    }
  })
})

describe('repl format with retained state', () => {
  it('later runs see earlier declarations and may declare them again', async () => {
    const { call, dispose } = await session('repl')
    try {
      await call('let x = 1\nconst y = 2\nfunction f() { return x + y }\nclass K { v() { return "k" } }')
      expect((await call('x = 5\nf()')).value).toBe(7)
      expect((await call('let x = 10\nconst y = 0\nf()')).value).toBe(10)
      expect((await call('new K().v()')).value).toBe('k')
      expect((await call('const K = 3\nK')).value).toBe(3)
    } finally {
      await dispose()
    }
  })

  it('a const cannot be assigned, in the same run or a later one', async () => {
    const { call, dispose } = await session('repl')
    try {
      await call('const limit = 3')
      const result = await call('limit = 4')
      expect(result.error?.kind).toBe('exception')
      expect(result.error?.message).toMatch(/TypeError/)
      expect((await call('limit')).value).toBe(3)
    } finally {
      await dispose()
    }
  })

  it('errors thrown inside a function from an earlier run point at that run', async () => {
    const { call, dispose } = await session('repl')
    try {
      await call('function boom() {\n  throw new Error("kaboom")\n}')
      const result = await call('\nboom()')
      expect(result.error?.message).toBe('Error: kaboom\n    at boom (program of run 1:2:9)\n    at program:2:1')
    } finally {
      await dispose()
    }
  })

  it('a runtime without retainState runs each repl call fresh', async () => {
    const { call, dispose } = await session('repl', false)
    try {
      await call('var kept = 1')
      expect((await call('typeof kept')).value).toBe('undefined')
    } finally {
      await dispose()
    }
  })
})

describe('scoped-repl format with retained state', () => {
  it('each run starts from copies, so redeclaring never changes what earlier closures captured', async () => {
    const { call, dispose } = await session('scoped-repl')
    try {
      await call('let x = 1\nconst read = () => x')
      expect((await call('x')).value).toBe(1)
      expect((await call('const x = 2;\n[x, read()]')).value).toEqual([2, 1])
      expect((await call('x = 3;\n[x, read()]')).value).toEqual([3, 1])
      expect((await call('x')).value).toBe(3)
    } finally {
      await dispose()
    }
  })

  it('carried values are the same objects', async () => {
    const { call, dispose } = await session('scoped-repl')
    try {
      await call('const list = [1]\nconst push = (v) => list.push(v)')
      expect((await call('push(2)\nlist')).value).toEqual([1, 2])
    } finally {
      await dispose()
    }
  })
})

describe('using declarations', () => {
  const nativeUsing = Number(process.versions.node.split('.')[0]) >= 24
  const program = "using handle = { [Symbol.dispose]() { console.log('disposed') } };\nconsole.log('running')"

  it.runIf(nativeUsing)('on Node 24 and later, a top-level using resource is disposed when its run ends and is not retained', async () => {
    const { call, dispose } = await session('repl')
    try {
      const first = await call(program)
      expect(textOf(first)).toBe('running\ndisposed\n')
      expect(first.error).toBeUndefined()
      expect((await call('typeof handle')).value).toBe('undefined')
    } finally {
      await dispose()
    }
  })

  it.skipIf(nativeUsing)('before Node 24, a using declaration is refused with the version it needs', async () => {
    const { call, dispose } = await session('repl')
    try {
      const result = await call(program)
      expect(result.error?.kind).toBe('exception')
      expect(result.error?.message).toMatch(/^SyntaxError: 'using' declarations need Node\.js 24 or later \(this runtime runs on Node\.js [\d.]+\) \(line 1, column 1\)/)
      expect(result.output).toEqual([])
    } finally {
      await dispose()
    }
  })
})

describe.each(['function-body', 'script', 'repl', 'scoped-repl'] as const)('%s: the model’s habits, on a real runtime', (format) => {
  const answer = format === 'function-body' ? 'return 40 + 2' : '40 + 2'

  it('runs a program wrapped in one Markdown fence', async () => {
    const { run, dispose } = await session(format, false)
    try {
      expect(await run(`\`\`\`js\nconsole.log("hi")\n${answer}\n\`\`\``)).toEqual({ output: [{ type: 'text', text: 'hi\n' }], calls: [], value: 42, sandbox: CONFINED })
    } finally {
      await dispose()
    }
  })

  it('calls a program that is one async arrow and returns its awaited value', async () => {
    const { run, dispose } = await session(format, false)
    try {
      expect((await run('async () => {\n  const a = await Promise.resolve(40)\n  return a + 2\n}')).value).toBe(42)
    } finally {
      await dispose()
    }
  })

  it('reports an error inside a fenced arrow at the line and column as written', async () => {
    const { run, dispose } = await session(format, false)
    try {
      const result = await run('```ts\nasync () => {\n  await null\n  throw new Error("no")\n}\n```')
      expect(result.error?.kind).toBe('exception')
      expect(result.error?.message).toBe('Error: no\n    at program:4:9')
    } finally {
      await dispose()
    }
  })
})

describe('TypeScript programs on a real runtime', () => {
  it('runs a typed program when the runtime is configured with language typescript, and says so', async () => {
    const env = await startRuntime({ language: 'typescript', programFormat: 'script', timeoutMs: 10_000 })
    try {
      expect(env.runtime.language).toBe('typescript')
      expect(env.runtime.executionInstructions).toMatch(/TypeScript is accepted: type annotations, interfaces/)
      const result = await env.run('interface Day { city: string; highC: number }\nconst days: Day[] = [{ city: "Oslo", highC: 14 }]\ndays.map((d: Day): string => d.city) satisfies string[]')
      expect(result).toEqual({ output: [], calls: [], value: ['Oslo'], sandbox: CONFINED })
    } finally {
      await env.dispose()
    }
  })

  it('reports a thrown error and its stack frames at the program’s own line and column', async () => {
    const env = await startRuntime({ language: 'typescript', timeoutMs: 10_000 })
    try {
      const source = 'function fail(reason: string): never {\n  throw new Error(reason as string)\n}\nconst n: number = 1; fail(`n=${n as number}`)'
      const result = await env.run(source)
      expect(result.error).toEqual({ kind: 'exception', message: 'Error: n=1\n    at fail (program:2:9)\n    at program:4:22' })
    } finally {
      await env.dispose()
    }
  })

  it('runs a typed program per request on a JavaScript runtime, and reports a type syntax error at its position', async () => {
    const env = await startRuntime({ timeoutMs: 10_000 })
    try {
      expect(env.runtime.executionInstructions).not.toMatch(/TypeScript/)
      expect((await env.run('const n: number = 41\nreturn n + 1', { language: 'typescript' })).value).toBe(42)
      const invalid = await env.run('const a = 1\nlet b: = 2', { language: 'typescript' })
      expect(invalid.error?.kind).toBe('exception')
      expect(invalid.error?.message).toMatch(/^SyntaxError: .* \(line 2, column 8\)\nlet b: = 2\n {7}\^$/)
      expect((await env.run('const n: number = 1\nreturn n')).error?.message).toMatch(/^SyntaxError: Unexpected token \(line 1, column 8\)/)
    } finally {
      await env.dispose()
    }
  })

  it('refuses an unknown language at resolve, naming the field and the choices', async () => {
    const env = await startRuntime()
    try {
      expect(() => env.runtime.resolve({ program: '', bindings: [], language: 'ruby' as never })).toThrow(
        'language must be one of javascript, typescript, python, got "ruby"',
      )
    } finally {
      await env.dispose()
    }
  })
})
