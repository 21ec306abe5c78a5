import { readFileSync } from 'node:fs'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { leakedSince, resourceBaseline, type ResourceSnapshot } from '../helpers/leaks.js'
import { ON_CONTAINER, startRuntime, textOf } from '../helpers/runtime.js'

describe('failure kinds', () => {
  let env: Awaited<ReturnType<typeof startRuntime>>
  let baseline: ResourceSnapshot
  beforeAll(async () => {
    baseline = await resourceBaseline()
    env = await startRuntime({ timeoutMs: 10_000, maxOutputBytes: 4096, maxOldGenerationSizeMb: 64 })
  })
  afterAll(async () => {
    await env.dispose()
    expect(await leakedSince(baseline)).toEqual({ threads: 0, children: [], descriptors: 0 })
  })

  it('times out a synchronous infinite loop, naming the budget', async () => {
    const result = await env.run('while (true) {}', { timeoutMs: 300 })
    expect(result.error).toEqual({ kind: 'timeout', message: expect.stringMatching(/time budget of 300 ms/) })
  })

  it('times out a never-settling await', async () => {
    expect((await env.run('await new Promise(() => {})', { timeoutMs: 300 })).error?.kind).toBe('timeout')
  })

  it('aborts mid-loop with the signal reason', async () => {
    const controller = new AbortController()
    setTimeout(() => controller.abort(new Error('stop now')), 200)
    const result = await env.run('while (true) {}', { signal: controller.signal, timeoutMs: null })
    expect(result.error).toEqual({ kind: 'abort', message: 'stop now' })
  })

  it('describes a hostile abort reason without running its code, before, during and while queued behind a run', async () => {
    const boom = () => {
      throw new Error('the reason ran code')
    }
    const reasons = [new Proxy(new Error('proxied'), { get: boom, getPrototypeOf: boom }), { toString: boom, [Symbol.toPrimitive]: boom }]
    // Retained, so a second run of the owner waits in its queue.
    const retained = await startRuntime({ retainState: true, programFormat: 'repl' })
    const owner = {}
    for (const reason of reasons) {
      const before = new AbortController()
      before.abort(reason)
      const during = new AbortController()
      const queued = new AbortController()
      const running = retained.run('while (true) {}', { signal: during.signal, timeoutMs: null, stateOwner: owner })
      const waiting = retained.run('1', { signal: queued.signal, stateOwner: owner })
      setTimeout(() => {
        queued.abort(reason)
        during.abort(reason)
      }, 200)
      const results = await Promise.all([env.run('return 1', { signal: before.signal }), running, waiting])
      const expected = reason === reasons[0] ? 'the run was aborted with a proxy' : 'the run was aborted with an object that is not an Error'
      expect(results.map((result) => result.error)).toEqual([
        { kind: 'abort', message: expected },
        { kind: 'abort', message: expected },
        { kind: 'abort', message: expected },
      ])
    }
    expect((await retained.run('"still here"', { stateOwner: owner })).value).toBe('still here')
    await retained.dispose()
  })

  it('reports process.exit as worker-exit', async () => {
    const result = await env.run('process.exit(7)')
    expect(result.error).toEqual({ kind: 'worker-exit', message: expect.stringMatching(/exit code 7/) })
  })

  it('survives running out of memory and runs the next program', async () => {
    const result = await env.run('const keep = []; while (true) keep.push(new Array(1e6).fill(1))', { timeoutMs: 60_000 })
    expect(result.error?.kind).toBe('worker-exit')
    expect(result.error?.message).toMatch(/out of memory/)
    expect((await env.run('return "still here"')).value).toBe('still here')
  })

  it('stops an infinite console.log loop at the output cap, keeping the fitting prefix', async () => {
    const result = await env.run('let i = 0; while (true) console.log("line", i++)')
    expect(result.error?.kind).toBe('output-limit')
    expect(result.error?.message).toMatch(/4096 bytes/)
    expect(textOf(result)).toMatch(/^line 0\nline 1\n/)
    expect(JSON.stringify(result.output.map((entry) => (entry as { text: string }).text)).length + JSON.stringify(result.error?.message).length).toBeLessThanOrEqual(4096)
  })

  it('reports a 100 MB string completion as output-limit without crashing', async () => {
    const result = await env.run('return "x".repeat(100 * 1024 * 1024)', { timeoutMs: 60_000 })
    expect(result.error?.kind).toBe('output-limit')
  })

  it('keeps working after a program mutates JSON, Object and Array.prototype', async () => {
    const result = await env.run(`
      JSON.stringify = () => '"forged"'
      JSON.parse = () => ({ forged: true })
      Object.keys = () => []
      Object.prototype.polluted = 1
      Array.prototype.push = function () { throw new Error('no push') }
      Array.isArray = () => false
      console.log('still printing')
      return { list: [1, 2, 3], nested: { ok: true } }`)
    expect(result).toEqual({ calls: [], output: [{ type: 'text', text: 'still printing\n' }], value: { list: [1, 2, 3], nested: { ok: true } }, sandbox: expect.anything() })
  })

  it('tolerates probing the host with signal 0 and refuses real signals', async () => {
    const result = await env.run(`
      process.kill(process.pid, 0)
      try { process.kill(process.pid, 'SIGKILL') } catch (e) { return e.code }`)
    expect(result.value).toBe('EPERM')
  })

  describe('forged channel traffic fails closed with protocol', () => {
    const tools = { global: 'tools', functions: { echo: async (value: unknown) => value as never } }

    it('a message on the worker parent port (the process tier has none: its helper runs the program on its main thread)', async () => {
      if (env.runtime.isolation === 'process') {
        expect((await env.run(`return (await import('node:worker_threads')).parentPort`)).value).toBe(null)
        return
      }
      const program = `(await import('node:worker_threads')).parentPort.postMessage({ type: 'done', run: 1 })
        await new Promise(() => {})`
      expect((await env.run(program, { timeoutMs: 20_000 })).error?.kind).toBe('protocol')
      expect((await env.run('return 1')).value).toBe(1)
    })

    // The channel is hidden from programs, but a determined one can still reach it through
    // Node internals (the corpus's hijack prelude): it learns the run in progress, then sends
    // whatever it likes where the worker's messages go.
    const prelude = readFileSync(new URL('../hostile/preludes/hijack.js', import.meta.url), 'utf8')
    const hijack = (message: string, send = 'forge') =>
      `${prelude.replaceAll('__HOST__', env.runtime.isolation === 'thread' ? 'thread' : 'process')}\n${send}(${message})\nawait hang()`

    it.each([
      ['a non-object', '42'],
      ['an array', '[1, 2]'],
      ['a message for another run', `{ type: 'done', run: runId + 1000 }`],
      ['an unknown type', `{ type: 'evil', run: runId }`],
      ['a call with an out-of-sequence id', `{ type: 'call', run: runId, id: 99, global: 'tools', name: 'echo' }`],
      ['a call to an undeclared binding', `{ type: 'call', run: runId, id: 2, global: 'tools', name: 'constructor' }`],
      ['an empty batch of calls', `{ type: 'calls', run: runId, calls: [] }`],
      ['a batch of calls with a malformed member', `{ type: 'calls', run: runId, calls: [{ type: 'call', run: runId, id: 2, global: 'tools', name: 'echo' }, 7] }`],
      ['a batch of calls with a member for another run', `{ type: 'calls', run: runId, calls: [{ type: 'call', run: runId + 1, id: 2, global: 'tools', name: 'echo' }] }`],
      ['a failure of a foreign kind', `{ type: 'failed', run: runId, kind: 'timeout', message: 'x' }`],
      ['output that is not a list', `{ type: 'output', run: runId, items: 'x' }`],
      ['an image that was never issued', `{ type: 'output', run: runId, items: [{ attachmentId: 'forged' }] }`],
      // The process tier reads the host's /proc to tell; a stream tier's host never kills by pid and adopts every report.
      ...(ON_CONTAINER ? [] : [['a subprocess report for a foreign process', `{ type: 'spawned', run: runId, pid: 1 }`]]),
    ])('%s', async (_name, message) => {
      const result = await env.run(hijack(message), { timeoutMs: 20_000, bindings: [tools] })
      expect(result.error?.kind).toBe('protocol')
      expect((await env.run('return 1')).value).toBe(1)
    })

    // Messages cross as JSON text: what lossless JSON cannot hold ends the line where it stands.
    it.each([
      ['a call whose arguments end mid-value', '`{"type":"call","run":${runId},"id":2,"global":"tools","name":"echo","args":[1,2`'],
      ['a completion of negative zero', '`{"type":"done","run":${runId},"value":-0}`'],
      ['a completion with a repeated key', '`{"type":"done","run":${runId},"value":{"a":1,"a":2}}`'],
      ['a container where the protocol has none', '`{"type":"output","run":${runId},"items":[],"padding":[[]]}`'],
    ])('%s', async (_name, text) => {
      const result = await env.run(hijack(text, 'forgeText'), { timeoutMs: 20_000, bindings: [tools] })
      expect(result.error?.kind).toBe('protocol')
      expect((await env.run('return 1')).value).toBe(1)
    })
  })
})
