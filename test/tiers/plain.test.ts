/**
 * The plain tier (src/host/environments/plain/tier.ts): the smallest tier, one file and one line
 * in `TIERS`, which supplies only a pipe. Everything else it gets from the connection and the
 * pipe environment, and these runs show that it works: calls, output, state, a timeout, forged
 * traffic, disposal.
 */
import { spawnSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { PtcBindingNamespace } from 'ptc-runtime'
import { startRuntime, textOf } from '../helpers/runtime.js'

const tools: PtcBindingNamespace = {
  global: 'tools',
  functions: {
    add: async (args) => (args as { a: number; b: number }).a + (args as { a: number; b: number }).b,
    echo: async (args) => args as never,
  },
}

/** The corpus's prelude that takes over the worker's channel (`forge` and `hang`). */
const HIJACK = readFileSync(new URL('../hostile/preludes/hijack.js', import.meta.url), 'utf8')

/** Helper processes (`helper.cjs`) this test process started that still run. */
function helpersRunning(): string[] {
  const out = spawnSync('ps', ['-eo', 'ppid=,args='], { encoding: 'utf8' }).stdout
  return out.split('\n').filter((line) => line.includes('helper.cjs') && Number(line.trim().split(/\s+/)[0]) === process.pid)
}

describe('the plain tier, a pipe and nothing more', () => {
  let env: Awaited<ReturnType<typeof startRuntime>>
  beforeAll(async () => {
    env = await startRuntime({ isolation: 'plain', retainState: true, programFormat: 'script', timeoutMs: 20_000, poolSize: 1 })
  })
  afterAll(() => env.dispose())

  it('runs a program with a tool call and its output, and keeps its state for the same owner', async () => {
    const owner = {}
    const first = await env.run('const sum = await tools.add({ a: 1, b: 2 })\nconsole.log("sum", sum)\nsum', { stateOwner: owner, bindings: [tools] })
    expect(first.error).toBeUndefined()
    expect(first.value).toBe(3)
    expect(textOf(first)).toBe('sum 3\n')
    expect(first.calls.map((call) => call.outcome)).toEqual(['ok'])
    expect((await env.run('sum * 10', { stateOwner: owner })).value).toBe(30)
    expect(env.runtime.isolation).toBe('plain')
  })

  it('ends a program over its time budget, and the next run gets a fresh environment', async () => {
    const result = await env.run('globalThis.marked = 1\nwhile (true) {}', { timeoutMs: 300 })
    expect(result.error?.kind).toBe('timeout')
    expect((await env.run('typeof globalThis.marked')).value).toBe('undefined')
  })

  it('fails a run whose program forges channel traffic, and serves the next one', async () => {
    const result = await env.run(`${HIJACK}\nforge(42)\nawait hang()`, { bindings: [tools] })
    expect(result.error?.kind).toBe('protocol')
    expect((await env.run('2 + 2')).value).toBe(4)
  })
})

describe('the plain tier at disposal', () => {
  it('leaves no helper running once the runtime is disposed', async () => {
    const own = await startRuntime({ isolation: 'plain', poolSize: 2 })
    expect((await own.run('return 1')).value).toBe(1)
    expect(helpersRunning().length).toBeGreaterThan(0)
    await own.dispose()
    expect(helpersRunning()).toEqual([])
  })
})
