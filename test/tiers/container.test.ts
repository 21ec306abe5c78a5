import { spawnSync } from 'node:child_process'
import { homedir } from 'node:os'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { PtcBindingNamespace } from 'ptc-runtime'
import { containerOptions } from '../helpers/container.js'
import { startRuntime, textOf } from '../helpers/runtime.js'

const options = containerOptions()

const tools: PtcBindingNamespace = { global: 'tools', functions: { double: async (args) => (args as { n: number }).n * 2 } }

/** The containers of this test run's image the engine still has, running or not. */
function containers(engine: string, image: string): string[] {
  const listed = spawnSync(engine, ['ps', '-a', '--format', '{{.Names}} {{.Image}}'], { encoding: 'utf8' }).stdout.split('\n')
  // The engine names the image in full (a registry prefix before the tag).
  return listed.map((line) => line.split(' ')).filter(([, of]) => of === image || of?.endsWith(`/${image}`)).map(([name]) => name!)
}

describe.skipIf(!options)('the container tier (podman)', () => {
  let env: Awaited<ReturnType<typeof startRuntime>>
  let before: string[]
  beforeAll(async () => {
    before = containers(options!.engine, options!.image)
    env = await startRuntime({ isolation: 'container', container: options!, retainState: true, programFormat: 'script', timeoutMs: 30_000 })
  })
  afterAll(async () => {
    await env?.dispose()
    // Every environment's container is deleted with the runtime.
    expect(containers(options!.engine, options!.image).filter((name) => !before.includes(name))).toEqual([])
  })

  it('runs a program with tool calls in a container, and keeps its state for the same owner', async () => {
    const owner = {}
    const first = await env.run('const n = await tools.double({ n: 21 })\nconsole.log("n", n)\nn', { stateOwner: owner, bindings: [tools] })
    expect(first.error).toBeUndefined()
    expect(first.value).toBe(42)
    expect(textOf(first)).toBe('n 42\n')
    expect((await env.run('n + 1', { stateOwner: owner })).value).toBe(43)
    expect(env.runtime.isolation).toBe('container')
    expect(first.sandbox).toEqual({ mode: 'workspace-write', network: 'none', denied: false, enforcement: 'full' })
    expect(env.runtime.executionInstructions).toMatch(/a container of their own: the working directory is \/tmp/)
  })

  it('shows the program none of the host’s files, no network and no privileges', async () => {
    const result = await env.run(`
      const fs = await import('node:fs')
      const net = await import('node:net')
      const reached = await new Promise((resolve) => {
        const socket = net.connect({ host: '1.1.1.1', port: 53 })
        socket.once('connect', () => resolve(true)).once('error', () => resolve(false))
      })
      ;({ home: fs.existsSync(${JSON.stringify(homedir())}), here: fs.existsSync(${JSON.stringify(process.cwd())}), reached, uid: process.getuid(), cwd: process.cwd(),
        image: (() => { try { fs.writeFileSync('/ptc/helper.cjs', 'planted'); return 'written' } catch (error) { return error.code } })() })
    `)
    expect(result.error).toBeUndefined()
    expect(result.value).toEqual({ home: false, here: false, reached: false, uid: 1000, cwd: '/tmp', image: expect.stringMatching(/EACCES|EROFS/) })
  })

  it('kills, before the owner’s next run, a process the program left outside the helper’s tree without its marker', async () => {
    const owner = {}
    const left = await env.run(`const { spawn } = await import('node:child_process')
      spawn('/bin/sh', ['-c', 'unset PTC_ENVIRONMENT; ( exec /usr/local/bin/node -e "setInterval(() => {}, 1000) // orphan" & )'], { stdio: 'ignore' })
      await new Promise((resolve) => setTimeout(resolve, 500))
      'left'`, { stateOwner: owner })
    expect(left.value).toBe('left')
    const found = await env.run(`const fs = await import('node:fs')
      fs.readdirSync('/proc').filter((pid) => /^\\d+$/.test(pid)).filter((pid) => {
        try { return fs.readFileSync('/proc/' + pid + '/cmdline', 'utf8').includes('// orphan') } catch { return false }
      })`, { stateOwner: owner })
    expect(found.error).toBeUndefined()
    expect(found.value).toEqual([])
    await env.runtime.release(owner)
  })

  it('ends a program over its time budget and deletes its container', async () => {
    const result = await env.run('while (true) {}', { timeoutMs: 500 })
    expect(result.error?.kind).toBe('timeout')
    expect((await env.run('1 + 1')).value).toBe(2)
  })

  it('holds a program to its memory budget', async () => {
    const result = await env.run('const kept = []\nwhile (true) kept.push(Buffer.alloc(16 * 1024 * 1024, 1))')
    expect(result.error?.kind).toBe('worker-exit')
    expect(result.error?.message).toMatch(/memory/)
  })

  it('ends a fork bomb at the container’s process limit, and the host survives', async () => {
    const result = await env.run(`const { spawn } = await import('node:child_process')
      for (let i = 0; i < 2000; i++) spawn('/bin/sh', ['-c', 'sleep 60'])
      'spawned'`, { timeoutMs: 20_000 })
    expect(['ok', 'exception', 'worker-exit']).toContain(result.error?.kind ?? 'ok')
    expect((await env.run('2 + 2')).value).toBe(4)
  })
})

describe('the container tier, misconfigured', () => {
  it('fails each run saying the image is missing and how to build it', async () => {
    const env = await startRuntime({ isolation: 'container', container: { ...(options ?? {}), engine: options?.engine ?? 'podman', image: 'ptc-runtime-missing:0' }, poolSize: 0 })
    try {
      const result = await env.run('return 1')
      expect(result.error?.kind).toBe('worker-exit')
      expect(result.error?.message).toMatch(options ? /ptc-runtime-missing:0 is not in podman's store: build it with `ptc-runtime-image`/ : /podman/)
    } finally {
      await env.dispose()
    }
  })

  it.skipIf(!options)('fails each run with the engine’s own words when it cannot run the container', async () => {
    const env = await startRuntime({ isolation: 'container', container: { ...options!, args: [...options!.args, '--no-such-option'] }, poolSize: 0 })
    try {
      const result = await env.run('return 1')
      expect(result.error?.kind).toBe('worker-exit')
      expect(result.error?.message).toMatch(/closed its stream \(.*run exited with code \d+: .*no-such-option/)
    } finally {
      await env.dispose()
    }
  })

  it('fails each run naming a container engine that is not installed', async () => {
    const env = await startRuntime({ isolation: 'container', container: { engine: 'no-such-engine' }, poolSize: 0 })
    try {
      const result = await env.run('return 1')
      expect(result.error?.kind).toBe('worker-exit')
      expect(result.error?.message).toMatch(/the container engine no-such-engine \(container\.engine\) was not found/)
    } finally {
      await env.dispose()
    }
  })
})
