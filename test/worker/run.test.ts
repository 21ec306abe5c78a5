import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { leakedSince, resourceBaseline, type ResourceSnapshot } from '../helpers/leaks.js'
import { CONFINED, startRuntime, textOf } from '../helpers/runtime.js'

describe('running function-body programs', () => {
  let env: Awaited<ReturnType<typeof startRuntime>>
  let baseline: ResourceSnapshot
  beforeAll(async () => {
    baseline = await resourceBaseline()
    env = await startRuntime({ timeoutMs: 10_000 })
  })
  afterAll(async () => {
    await env.dispose()
    expect(await leakedSince(baseline)).toEqual({ threads: 0, children: [], descriptors: 0 })
  })

  it('returns the completion value as lossless JSON', async () => {
    expect(await env.run('return { a: [1, "two", null, true], b: { c: 1.5 } }')).toEqual({
      calls: [],
      output: [],
      value: { a: [1, 'two', null, true], b: { c: 1.5 } },
      sandbox: CONFINED,
    })
  })

  it('omits the value key for an undefined completion', async () => {
    const result = await env.run('const x = 1')
    expect(result).toEqual({ calls: [], output: [], sandbox: CONFINED })
    expect('value' in result).toBe(false)
  })

  it('supports top-level await and strict mode', async () => {
    expect((await env.run('await null; return (function () { return this })() === undefined')).value).toBe(true)
  })

  it('reports a lossy completion as invalid-output', async () => {
    const result = await env.run('return { when: new Date(0) }')
    expect(result.error?.kind).toBe('invalid-output')
    expect(result.error?.message).toMatch(/\$\.when/)
  })

  it('drops the completion without validating it when asked', async () => {
    expect(await env.run('return new Map()', { discardCompletion: true })).toEqual({ calls: [], output: [], sandbox: CONFINED })
  })

  it('passes a 10 000-deep nested completion', async () => {
    const result = await env.run('let v = 0; for (let i = 0; i < 10000; i++) v = [v]; return v')
    let depth = 0
    let value = result.value
    while (Array.isArray(value)) {
      depth++
      value = value[0]
    }
    expect(depth).toBe(10_000)
  })

  it('captures the console API in emission order with line breaks', async () => {
    const result = await env.run(`
      console.log('a', 1, { b: [2] })
      console.error('err')
      process.stdout.write('raw')
      process.stderr.write('-raw\\n')
      console.table([{ x: 1 }])
      console.group('g'); console.info('inside'); console.groupEnd()
      console.count(); console.count()
      console.assert(false, 'nope')
      console.dir({ deep: { deeper: { deepest: { bottom: 1 } } } })
    `)
    expect(result.error).toBeUndefined()
    expect(result.output[0]).toEqual({ type: 'text', text: "a 1 { b: [ 2 ] }\n" })
    expect(textOf(result)).toBe(
      "a 1 { b: [ 2 ] }\nerr\nraw-raw\n" +
        '┌─────────┬───┐\n│ (index) │ x │\n├─────────┼───┤\n│ 0       │ 1 │\n└─────────┴───┘\n' +
        'g\n  inside\ndefault: 1\ndefault: 2\nAssertion failed: nope\n{ deep: { deeper: { deepest: [Object] } } }\n',
    )
  })

  it('reports a thrown error with its name, message and program position', async () => {
    const result = await env.run('const x = 1\n\n  throw new TypeError("bad input")')
    expect(result.error).toEqual({ kind: 'exception', message: 'TypeError: bad input\n    at program:3:9' })
  })

  it('renders thrown non-Error values safely', async () => {
    expect((await env.run('throw 42')).error).toEqual({ kind: 'exception', message: 'Uncaught 42' })
    const tricky = await env.run(`
      const e = new Error('x')
      Object.defineProperty(e, 'message', { get() { throw new Error('no') } })
      throw e`)
    expect(tricky.error?.kind).toBe('exception')
    expect(tricky.error?.message).toMatch(/unrenderable/)
  })

  it('keeps runtime internals out of the stack a program sees', async () => {
    const result = await env.run('function inner() { return new Error("e").stack }\nreturn inner()')
    expect(result.value).toBe('Error: e\n    at inner (program:1:27)\n    at program:2:8')
  })

  it('exposes no environment variables', async () => {
    expect((await env.run('return JSON.stringify(process.env)')).value).toBe('{}')
  })

  it('never shares globals between one-shot runs', async () => {
    await env.run('globalThis.leak = 1')
    expect((await env.run('return typeof leak')).value).toBe('undefined')
  })

  it('loads Node built-ins through dynamic import', async () => {
    expect((await env.run('const os = await import("node:os"); return typeof os.cpus')).value).toBe('function')
  })
})
