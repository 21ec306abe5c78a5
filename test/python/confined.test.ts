/**
 * Python under the default confinement (a bubblewrap-confined helper per environment): Pyodide
 * is no sandbox, since Python reaches all of Node through its FFI, so each attack a JavaScript
 * program could make is made here from Python, and must end as it does for JavaScript.
 */
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { CONFINED, startRuntime, textOf } from '../helpers/runtime.js'

const SECRET = 'python-confinement-secret-6f1c'
const HIDDEN_FILE = path.resolve('test/python/confined.test.ts')
const SLOW = { timeout: 240_000 }

describe('Python on the default confined tier', () => {
  let env: Awaited<ReturnType<typeof startRuntime>>
  const run = (program: string, options = {}) => env.run(program, { timeoutMs: 90_000, ...options })
  beforeAll(async () => {
    process.env.PTC_PYTHON_TEST_SECRET = SECRET
    env = await startRuntime({ language: 'python', poolSize: 1 })
  }, 240_000)
  afterAll(async () => {
    delete process.env.PTC_PYTHON_TEST_SECRET
    await env?.dispose()
  })

  it('runs a program that calls three tools concurrently, confined', SLOW, async () => {
    const bindings = [{ global: 'tools', functions: { double: async ({ n }: { n: number }) => n * 2 } }]
    const result = await run('import asyncio\nprint("go")\nreturn list(await asyncio.gather(*(tools.double(n=n) for n in range(3))))', { bindings })
    expect(result).toMatchObject({ value: [0, 2, 4], sandbox: CONFINED })
    expect(textOf(result)).toBe('go\n')
  })

  it('cannot read the host’s files through the FFI’s fs', SLOW, async () => {
    const result = await run(`import js\nfs = js.process.getBuiltinModule("fs")\nreturn fs.readFileSync(${JSON.stringify(HIDDEN_FILE)}, "utf8")`)
    expect(result.error?.kind).toBe('exception')
    expect(result.error?.message).toMatch(/ENOENT/)
  })

  it('sees none of the host’s environment through js.process', SLOW, async () => {
    const result = await run('import js, json\nreturn json.loads(js.JSON.stringify(js.process.env))')
    expect(JSON.stringify(result)).not.toContain(SECRET)
  })

  it('cannot reach the host’s files from a child process', SLOW, async () => {
    const result = await run(`import js\ncp = js.process.getBuiltinModule("child_process")\nreturn cp.execFileSync("/bin/cat", [${JSON.stringify(HIDDEN_FILE)}], js.JSON.parse('{"encoding": "utf8"}'))`)
    expect(result.error?.kind).toBe('exception')
    expect(JSON.stringify(result)).not.toContain('Python under the default confinement')
  })

  it('finds no require to reach for', SLOW, async () => {
    const result = await run('import js\nreturn js.require("fs")')
    expect(result.error?.kind).toBe('exception')
  })

  it('forging frames on the channel descriptor ends the run as a protocol violation', SLOW, async () => {
    const result = await run('import js\nfs = js.process.getBuiltinModule("fs")\nfs.writeSync(3, \'{"type":"message","message":{"type":"done","run":1,"value":"forged"}}\\n\')\nimport time\ntime.sleep(1)\nreturn "not forged"')
    expect(result.value).not.toBe('forged')
  })

  it('stops a runaway loop at its deadline, and the next program runs', SLOW, async () => {
    const result = await run('while True:\n    pass', { timeoutMs: 3000 })
    expect(result.error?.kind).toBe('timeout')
    expect((await run('return 6 * 7')).value).toBe(42)
  })

  it('ends a memory bomb within the memory budget, and the next program runs', SLOW, async () => {
    const result = await run('chunks = []\nwhile True:\n    chunks.append(bytearray(64 * 2**20))')
    expect(['exception', 'worker-exit']).toContain(result.error?.kind)
    expect((await run('return "after"')).value).toBe('after')
  })
})
