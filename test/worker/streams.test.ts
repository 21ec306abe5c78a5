import { spawnSync } from 'node:child_process'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { leakedSince, resourceBaseline, type ResourceSnapshot } from '../helpers/leaks.js'
import { CONFINED, startRuntime, textOf } from '../helpers/runtime.js'

describe('process.stdout and process.stderr capture output as Node encodes it', () => {
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

  it('decodes a string chunk with the encoding passed to write', async () => {
    const result = await env.run(`
      process.stdout.write('68656c6c6f', 'hex')
      process.stdout.write(' ')
      process.stderr.write('d29ybGQ=', 'base64')
      process.stdout.write('!', 'utf-8')
      process.stdout.write('\\u00e9', 'latin1')`)
    expect(result.error).toBeUndefined()
    expect(textOf(result)).toBe('hello world!\ufffd')
  })

  it('writes the bytes of any TypedArray or DataView, not their string form', async () => {
    const result = await env.run(`
      process.stdout.write(new Uint16Array([16961]))
      process.stdout.write(new DataView(new Uint8Array([0x43, 0x44, 0x45]).buffer, 1, 1))
      process.stdout.write(Buffer.from('xEFx').subarray(1, 3))
      process.stdout.write(new Uint8Array(new SharedArrayBuffer(1)).fill(0x47))`)
    expect(textOf(result)).toBe('ABDEFG')
  })

  it('decodes a character split across byte chunks once', async () => {
    const result = await env.run(`
      const euro = Buffer.from('\u20ac')
      process.stdout.write(euro.subarray(0, 1))
      process.stderr.write('between ')
      process.stdout.write(euro.subarray(1, 2))
      process.stdout.write(euro.subarray(2))
      process.stdout.write(' and a string')`)
    expect(textOf(result)).toBe('between \u20ac and a string')
  })

  it('turns an incomplete character into one replacement character, before a string or at the end of the run', async () => {
    const beforeString = await env.run(`
      process.stdout.write(new Uint8Array([0xe2, 0x82]))
      process.stdout.write('a')`)
    expect(textOf(beforeString)).toBe('\ufffda')
    const atEnd = await env.run(`
      process.stdout.write('b')
      process.stderr.write(new Uint8Array([0xf0, 0x9f]))
      return 1`)
    expect(atEnd).toEqual({ calls: [], output: [{ type: 'text', text: 'b' }, { type: 'text', text: '\ufffd' }], value: 1, sandbox: CONFINED })
    const atFailure = await env.run(`process.stdout.write(new Uint8Array([0xc3])); throw new Error('stop')`)
    expect(textOf(atFailure)).toBe('\ufffd')
    expect(atFailure.error?.kind).toBe('exception')
  })

  it('keeps a byte order mark and console output in stream order', async () => {
    const result = await env.run(`
      process.stdout.write(new Uint8Array([0xef, 0xbb, 0xbf, 0x41]))
      process.stdout.write(new Uint8Array([0xe2]))
      console.log('log')`)
    expect(textOf(result)).toBe('\ufeffA\ufffdlog\n')
  })

  it('captures the chunk given to end and calls every callback', async () => {
    const result = await env.run(`
      const called = []
      process.stdout.write('one ', () => called.push('write'))
      process.stdout.write('two ', 'utf8', (error) => called.push('write with encoding ' + error))
      const returned = process.stdout.end('end', () => called.push('end'))
      process.stderr.end(Buffer.from(' bytes'))
      process.stderr.end('2020', 'hex', () => called.push('end with encoding'))
      process.stdout.end(() => called.push('end without chunk'))
      await new Promise((resolve) => setTimeout(resolve, 50))
      process.stdout.write(' still open')
      return [returned === process.stdout, called.sort()]`)
    expect(textOf(result)).toBe('one two end bytes   still open')
    expect(result.value).toEqual([true, ['end', 'end with encoding', 'end without chunk', 'write', 'write with encoding null']])
  })

  it('refuses what Node refuses, with Node error codes', async () => {
    const result = await env.run(`
      const codes = []
      for (const attempt of [() => process.stdout.write(5), () => process.stdout.write({}), () => process.stdout.write(null),
        () => process.stdout.write('x', 'no-such-encoding'), () => process.stderr.end(7)]) {
        try { attempt(); codes.push('accepted') } catch (error) { codes.push(error.name + ' ' + error.code) }
      }
      return codes`)
    expect(result.value).toEqual([
      'TypeError ERR_INVALID_ARG_TYPE',
      'TypeError ERR_INVALID_ARG_TYPE',
      'TypeError ERR_STREAM_NULL_VALUES',
      'TypeError ERR_UNKNOWN_ENCODING',
      'TypeError ERR_INVALID_ARG_TYPE',
    ])
    expect(textOf(result)).toBe('')
  })

  it('captures writes that go through the Writable machinery instead of the stream methods', async () => {
    const result = await env.run(`
      const { Writable } = await import('node:stream')
      Writable.prototype.write.call(process.stdout, 'machinery ')
      process.stdout.cork(); Writable.prototype.write.call(process.stdout, 'cor'); Writable.prototype.write.call(process.stdout, 'ked '); process.stdout.uncork()
      Object.getPrototypeOf(process.stdout)._writev.call(process.stderr, [{ chunk: 'prototype ', encoding: 'utf8' }], () => {})
      await new Promise((resolve) => Writable.prototype.end.call(process.stdout, 'ended', resolve))`)
    expect(result.error).toBeUndefined()
    expect(textOf(result)).toBe('machinery corked prototype ended')
  })
})

describe('output never reaches the host process', () => {
  it("a program's writes and ends leave the host's own stdout and stderr untouched", () => {
    const program = `
      const { Writable } = await import('node:stream')
      process.stdout.write('written')
      process.stdout.end(' ended')
      process.stderr.end(Buffer.from(' and on stderr'))
      Writable.prototype.end.call(process.stderr, ' by the machinery')
      Object.getPrototypeOf(process.stdout)._writev.call(process.stdout, [{ chunk: ' by the prototype', encoding: 'utf8' }], () => {})
      await new Promise((resolve) => setTimeout(resolve, 100))
      return 'done'`
    const script = `
      import { Context } from 'cordis'
      import { WorkerPtcRuntime } from 'ptc-runtime/cordis'
      const root = new Context()
      await root.plugin(WorkerPtcRuntime, { poolSize: 0 })
      const r = await root.ptcRuntime.run(root.ptcRuntime.resolve({ program: ${JSON.stringify(program)}, bindings: [] }))
      console.log(JSON.stringify(r))`
    const { stdout, stderr } = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8', timeout: 20_000 })
    expect(stderr).toBe('')
    expect(JSON.parse(stdout)).toEqual({
      calls: [],
      output: [
        { type: 'text', text: 'written' },
        { type: 'text', text: ' ended' },
        { type: 'text', text: ' and on stderr' },
        { type: 'text', text: ' by the machinery' },
        { type: 'text', text: ' by the prototype' },
      ],
      value: 'done',
      sandbox: CONFINED,
    })
    expect(stdout).toBe(`${stdout.trim()}\n`)
  })
})
