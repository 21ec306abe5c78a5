import { spawnSync } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs'
import { homedir, tmpdir } from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { PtcBindingNamespace } from 'ptc-runtime'
import { containerCpuAccount } from '../../src/host/environments/container/cpu.js'
import { containerEngine, containerOptions } from '../helpers/container.js'
import { startRuntime, textOf } from '../helpers/runtime.js'

const options = containerOptions()
const engine = await containerEngine()

const tools: PtcBindingNamespace = { global: 'tools', functions: { double: async (args) => (args as { n: number }).n * 2 } }

/** The containers of this test run's image the engine still has, running or not. */
function containers(engine: string, image: string): string[] {
  const listed = spawnSync(engine, ['ps', '-a', '--format', '{{.Names}} {{.Image}}'], { encoding: 'utf8' }).stdout.split('\n')
  // The engine names the image in full (a registry prefix before the tag).
  return listed.map((line) => line.split(' ')).filter(([, of]) => of === image || of?.endsWith(`/${image}`)).map(([name]) => name!)
}

/** The CPU time in ms of the host's processes whose command line contains `needle` (a container's, seen from the host); undefined when there are none. */
function cpuMsOf(needle: string): number | undefined {
  let ticks: number | undefined
  for (const pid of readdirSync('/proc').filter((entry) => /^\d+$/.test(entry))) {
    try {
      if (!readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(needle)) continue
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
      ticks = (ticks ?? 0) + Number(fields[11]) + Number(fields[12]) // utime, stime
    } catch {
      // gone meanwhile
    }
  }
  return ticks === undefined ? undefined : ticks * 10 // USER_HZ is 100 on Linux
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

  it('lets the program write only where the instructions say: /tmp', async () => {
    const result = await env.run(`const fs = await import('node:fs')
      const places = fs.readFileSync('/proc/self/mounts', 'utf8').split('\\n').filter(Boolean).map((line) => line.split(' ')[1])
      places.push('/', '/var/tmp', '/dev/shm', '/run', '/dev/mqueue', '/etc', '/ptc', '/dev')
      ;[...new Set(places)].filter((place) => {
        try { fs.writeFileSync(place.replace(/\\/$/, '') + '/written-by-program', 'x'); return true } catch { return false }
      })`)
    expect(result.error).toBeUndefined()
    expect(result.value).toEqual(['/tmp'])
    expect(env.runtime.executionInstructions).toMatch(/\/tmp, empty at first and the only place you may write/)
  })

  it('charges a held run with the CPU of every process in its container, so a double-forked spinner times it out', async () => {
    const gate: PtcBindingNamespace = { global: 'gate', functions: { ask: async (_args, call) => (await call.hold({ ask: 'spin' }), 'approved') } }
    const spinner = `held spinner ${process.pid}-${Date.now()}`
    const paused = await env.run(`const { spawn } = await import('node:child_process')
      // Out of the helper's tree at once, without its marker: the orphan belongs to the container's init.
      spawn('/bin/sh', ['-c', 'unset PTC_ENVIRONMENT; ( exec /usr/local/bin/node -e "for (;;) {} // ${spinner}" & )'], { stdio: 'ignore' })
      await gate.ask()`, { bindings: [gate], timeoutMs: 1000 })
    expect(paused.paused?.tool).toBe('gate.ask')
    // However loaded the machine, the answer waits until the spinner has spent twice the budget,
    // or until it is gone with its container (the budget ran out), and then for the budget's
    // next look (they are at most a second apart).
    let seen = false
    for (let waited = 0; waited < 60_000; waited += 250) {
      const spent = cpuMsOf(spinner)
      seen ||= spent !== undefined
      if (seen && (spent === undefined || spent >= 2000)) break
      await new Promise((resolve) => setTimeout(resolve, 250))
    }
    expect(seen).toBe(true)
    await new Promise((resolve) => setTimeout(resolve, 2500))
    const result = await env.runtime.resume(paused.paused!.id, { approve: true })
    expect(result.error?.kind).toBe('timeout')
  }, 120_000)

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
      'spawned'`, { timeoutMs: 60_000 }) // 2 000 spawns take about 20 s on a loaded two-core machine
    expect(['ok', 'exception', 'worker-exit']).toContain(result.error?.kind ?? 'ok')
    expect((await env.run('2 + 2')).value).toBe(4)
  }, 120_000)
})

describe.skipIf(!engine)('a container’s CPU account, read from the host', () => {
  it('counts what every process of the container spent, as the host sees it (its cgroup’s account)', async () => {
    const name = `ptc-account-test-${process.pid}-${Date.now()}`
    const cwd = mkdtempSync(path.join(tmpdir(), 'ptc-account-test-'))
    // Spins about half a second of CPU in a grandchild, then waits to be deleted.
    const script = '( i=0; while [ $i -lt 300000 ]; do i=$((i+1)); done ) & wait; sleep 60'
    spawnSync(engine!.engine, ['run', '-d', '--rm', '--name', name, ...engine!.runArgs, '--network', 'none', '--rootfs', '/:O', '/bin/sh', '-c', script], { cwd })
    try {
      const account = await containerCpuAccount(engine!.engine, name, cwd)
      expect(account).toBeDefined()
      let spent = 0
      for (let waited = 0; waited < 30_000 && spent < 200; waited += 250) {
        spent = account!() ?? 0
        await new Promise((resolve) => setTimeout(resolve, 250))
      }
      expect(spent).toBeGreaterThanOrEqual(200)
      expect(await containerCpuAccount(engine!.engine, 'ptc-no-such-container', cwd)).toBeUndefined()
    } finally {
      spawnSync(engine!.engine, ['rm', '-f', '-t', '0', name], { cwd })
      rmSync(cwd, { recursive: true, force: true })
    }
  }, 60_000)
})

describe('the container tier, misconfigured', () => {
  it.skipIf(!options)('fails at start saying the image is missing and how to build it', async () => {
    await expect(startRuntime({ isolation: 'container', container: { ...options!, image: 'ptc-runtime-missing:0' }, poolSize: 0 })).rejects.toThrow(
      /ptc-runtime-missing:0 is not in podman's store: build it with `ptc-runtime-image`/,
    )
  })

  it.skipIf(!options)('fails at start with the engine’s own words, naming the options to set, when no runtime it tries can run the container', async () => {
    const failing = startRuntime({ isolation: 'container', container: { ...options!, args: [...(options!.args ?? []), '--no-such-option'] }, poolSize: 0 })
    await expect(failing).rejects.toThrow(/podman cannot run a container here.*no-such-option.*container\.runtime.*container\.args/s)
  })

  it.skipIf(!options)('fails at start naming an OCI runtime that cannot run the container', async () => {
    const failing = startRuntime({ isolation: 'container', container: { ...options!, runtime: '/bin/false' }, poolSize: 0 })
    await expect(failing).rejects.toThrow(/\/bin\/false.*container\.runtime/s)
  })

  it('fails at start naming a container engine that is not installed', async () => {
    await expect(startRuntime({ isolation: 'container', container: { engine: 'no-such-engine' }, poolSize: 0 })).rejects.toThrow(
      /the container engine no-such-engine \(container\.engine\) was not found/,
    )
  })

  it('removes at start the engine directories a killed runtime left in the temp directory, and only those', async () => {
    const gone = spawnSync(process.execPath, ['-e', 'process.pid'])
    const orphaned = mkdtempSync(path.join(tmpdir(), `ptc-engine-${gone.pid}-`))
    const alive = mkdtempSync(path.join(tmpdir(), `ptc-engine-${process.pid}-`))
    try {
      await startRuntime({ isolation: 'container', container: { engine: 'no-such-engine' }, poolSize: 0 }).catch(() => undefined)
      expect(existsSync(orphaned)).toBe(false)
      expect(existsSync(alive)).toBe(true)
    } finally {
      rmSync(orphaned, { recursive: true, force: true })
      rmSync(alive, { recursive: true, force: true })
    }
  })
})

describe.skipIf(!options)('the container tier, requests', () => {
  it('refuses a request cwd at resolve: programs run in the container’s /tmp, where a host path means nothing', async () => {
    const env = await startRuntime({ isolation: 'container', container: options!, poolSize: 0 })
    try {
      expect(() => env.runtime.resolve({ program: 'return 1', bindings: [], cwd: process.cwd() })).toThrow(/cwd .*isolation 'container'.*\/tmp/)
      expect(env.runtime.resolve({ program: 'return 1', bindings: [] }).program).toBe('return 1')
    } finally {
      await env.dispose()
    }
  })
})
