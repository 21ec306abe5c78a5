import { spawnSync } from 'node:child_process'
import { existsSync, rmSync } from 'node:fs'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { PtcBindingNamespace } from 'ptc-runtime'
import { parseEntryLine } from '../../src/protocol/frames.js'
import { startRuntime, textOf } from '../helpers/runtime.js'
import { SandboxService, localStream, running } from '../helpers/stream.js'
import { isDead } from '../../src/system/process-sweep.js'
import { describePipeTier } from './pipe-tier-suite.js'

const tools: PtcBindingNamespace = {
  global: 'tools',
  functions: {
    add: async (args) => (args as { a: number; b: number }).a + (args as { a: number; b: number }).b,
    echo: async (args) => args as never,
  },
}

/** Entry processes (`stream-entry.cjs`) this test process started that still run. */
function entriesRunning(): string[] {
  const out = spawnSync('ps', ['-eo', 'ppid=,args='], { encoding: 'utf8' }).stdout
  return out.split('\n').filter((line) => line.includes('stream-entry.cjs') && Number(line.trim().split(/\s+/)[0]) === process.pid)
}

describePipeTier({ name: 'stream', isolation: { stream: localStream }, running: entriesRunning, endsDetachedSubprocesses: false })

describe('the stream tier, over a local stream', () => {
  let env: Awaited<ReturnType<typeof startRuntime>>
  beforeAll(async () => {
    env = await startRuntime({ isolation: { stream: localStream }, retainState: true, programFormat: 'script', timeoutMs: 20_000 })
  })
  afterAll(() => env.dispose())

  it('refuses Python where the far end has no Pyodide of the host’s: a request at resolve, a runtime at start', async () => {
    const refusal = "WorkerPtcRuntime: language 'python' is unavailable on isolation 'stream': its programs run in the far helper's working directory, which has no Pyodide of the host's; use isolation 'process' (the default) or 'thread'"
    expect(() => env.runtime.resolve({ program: 'return 1', bindings: [], language: 'python' })).toThrow(refusal)
    await expect(startRuntime({ isolation: { stream: localStream }, language: 'python' })).rejects.toThrow(refusal)
  })

  it('kills a subprocess a retained run left before the next run', async () => {
    const owner = {}
    const started = await env.run('const { spawn } = await import("node:child_process")\nconst child = spawn("sleep", ["600"], { detached: true })\nchild.pid', { stateOwner: owner })
    const pid = started.value as number
    expect(Number.isInteger(pid)).toBe(true)
    // Killed: dead, though a zombie until the helper, its parent, reaps it (`running` counts that).
    expect(isDead(pid)).toBe(true)
    await env.runtime.release(owner)
  })

  it('runs programs in a scratch directory and home of the entry’s, never the host’s working directory', async () => {
    const name = `planted-by-stream-test-${process.pid}.js`
    try {
      const result = await env.run(`const fs = await import('node:fs')
        fs.writeFileSync(${JSON.stringify(name)}, 'process.exit(1)\\n')
        ;({ cwd: process.cwd() })`)
      expect(result.error).toBeUndefined()
      const { cwd } = result.value as { cwd: string }
      expect(cwd).not.toBe(process.cwd())
      expect(existsSync(path.join(process.cwd(), name))).toBe(false)
    } finally {
      rmSync(path.join(process.cwd(), name), { force: true })
    }
  })
})

describe('the stream tier, against its own environment', () => {
  it('discards a kept environment that floods the stream between runs, and the owner’s next run starts fresh', async () => {
    const env = await startRuntime({ isolation: { stream: localStream }, retainState: true, programFormat: 'script' })
    try {
      const owner = {}
      const flooding = await env.run(`globalThis.kept = 1
        const fs = await import('node:fs')
        // Straight to the helper's stdout, past the runtime's streams: the entry forwards it.
        const text = 'x'.repeat(60_000)
        setInterval(() => { try { fs.writeSync(1, text) } catch {} }, 1)
        'flooding'`, { stateOwner: owner })
      expect(flooding.value).toBe('flooding')
      await new Promise((resolve) => setTimeout(resolve, 1500))
      const next = await env.run('typeof globalThis.kept', { stateOwner: owner })
      expect(next.value).toBe('undefined')
      expect(textOf(next)).toMatch(/state/)
    } finally {
      await env.dispose()
    }
  })
})

describe('entry lines', () => {
  it('takes each line only in its exact shape, so padding is forged traffic', () => {
    expect(parseEntryLine(['busy', 12])).toEqual(['busy', 12])
    expect(parseEntryLine(['busy', 12, [{}, {}]])).toBeUndefined()
    expect(parseEntryLine(['busy', Number.POSITIVE_INFINITY])).toBeUndefined()
    expect(parseEntryLine(['output', 'x', {}])).toBeUndefined()
    expect(parseEntryLine(['forged', 1])).toBeUndefined()
    expect(parseEntryLine(['swept', true, 0])).toBeUndefined()
    expect(parseEntryLine(['ended', 'x', false, 1])).toBeUndefined()
    expect(parseEntryLine(['channel', { type: 'ready', cwd: '/' }, 1])).toBeUndefined()
    expect(parseEntryLine(['ended', 'exited with code 0', false])).toEqual(['ended', 'exited with code 0', false])
    expect(parseEntryLine(['hello', 2])).toEqual(['hello', 2])
    expect(parseEntryLine(['hello', 2, 'padding'])).toBeUndefined()
    expect(parseEntryLine(['hello', '2'])).toBeUndefined()
    expect(parseEntryLine(['hello', 2.5])).toBeUndefined()
    expect(parseEntryLine(['hello', -1])).toBeUndefined()
  })
})

describe('the stream tier, into a remote sandbox service', () => {
  it('creates one sandbox per environment, and deleting them all is what disposal does', async () => {
    const service = new SandboxService()
    const env = await startRuntime({ isolation: { stream: service.stream }, retainState: true, timeoutMs: 20_000 })
    try {
      const [a, b] = await Promise.all([
        env.run('return await tools.add({ a: 2, b: 3 })', { stateOwner: {}, bindings: [tools] }),
        env.run('return await tools.add({ a: 4, b: 5 })', { stateOwner: {}, bindings: [tools] }),
      ])
      expect([a.value, b.value]).toEqual([5, 9])
      expect(service.live().length).toBeGreaterThanOrEqual(2)
      expect(new Set(service.sandboxes.keys()).size).toBe(service.sandboxes.size)
    } finally {
      await env.dispose()
    }
    expect(service.live()).toEqual([])
    for (const sandbox of service.sandboxes.values()) expect(running(sandbox.entry!.pid!)).toBe(false)
  })

  it('deletes the sandbox of a run that timed out', async () => {
    const service = new SandboxService()
    const env = await startRuntime({ isolation: { stream: service.stream }, poolSize: 0 })
    try {
      const checkedAtStart = service.sandboxes.size
      const result = await env.run('while (true) {}', { timeoutMs: 300 })
      expect(result.error?.kind).toBe('timeout')
      expect(service.sandboxes.size).toBe(checkedAtStart + 1)
      expect(service.live()).toEqual([])
    } finally {
      await env.dispose()
    }
  })

  it('fails the run with the service’s reason when a sandbox cannot be created', async () => {
    const service = new SandboxService()
    service.failing = 'quota exceeded for sandboxes'
    const env = await startRuntime({ isolation: { stream: service.stream }, poolSize: 0 })
    try {
      const result = await env.run('return 1')
      service.failing = undefined
      expect(result.error?.kind).toBe('worker-exit')
      expect(result.error?.message).toMatch(/quota exceeded for sandboxes/)
      expect((await env.run('return 2')).value).toBe(2)
    } finally {
      await env.dispose()
    }
    expect(service.live()).toEqual([])
  })
})

describe('stream tier configuration', () => {
  it('refuses a sandbox policy, which only the process tier enforces', async () => {
    await expect(startRuntime({ isolation: { stream: localStream }, sandbox: { mode: 'read-only' } })).rejects.toThrow(/config\.sandbox needs config\.isolation 'process'/)
  })

  it('refuses a request cwd at resolve: the far helper cannot enter a host path', async () => {
    const env = await startRuntime({ isolation: { stream: localStream }, poolSize: 0 })
    try {
      expect(() => env.runtime.resolve({ program: 'return 1', bindings: [], cwd: process.cwd() })).toThrow(/cwd is refused on isolation 'stream': its programs run in the far helper's working directory/)
    } finally {
      await env.dispose()
    }
  })

  it('refuses container options without the container tier', async () => {
    await expect(startRuntime({ container: { engine: 'podman' } })).rejects.toThrow(/config\.container needs config\.isolation 'container'/)
  })

  it('leaves no entry process behind', () => {
    expect(entriesRunning()).toEqual([])
  })
})
