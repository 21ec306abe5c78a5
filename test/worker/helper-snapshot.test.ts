import { execFileSync } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import os from 'node:os'
import path from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { describe, expect, it } from 'vitest'
import { startRuntime, textOf } from '../helpers/runtime.js'

type Env = Awaited<ReturnType<typeof startRuntime>>

/** Where the helper running this program read its startup snapshot from, or null. */
const SNAPSHOT_OF_HELPER = `const args = (await import('node:fs')).readFileSync('/proc/self/cmdline', 'utf8').split('\\0'); const at = args.indexOf('--snapshot-blob'); return at === -1 ? null : args[at + 1]`
/** An expression: whether the helper running the program started from the snapshot (its real command line says). */
const RESTORED = `(await import('node:fs')).readFileSync('/proc/self/cmdline', 'utf8').split('\\0').includes('--snapshot-blob')`

/** Runs fresh environments until one starts from the startup snapshot; its file. */
async function snapshotInUse(env: Env): Promise<string> {
  const deadline = Date.now() + 20_000
  for (;;) {
    const result = await env.run(SNAPSHOT_OF_HELPER)
    expect(result.error).toBeUndefined()
    if (typeof result.value === 'string') return result.value
    if (Date.now() > deadline) throw new Error('no helper started from a startup snapshot within 20 s')
    await sleep(100)
  }
}

/**
 * The oracle, apart from the library: whether this Node runs a worker thread that loads
 * `child_process` in a process restored from a userland snapshot (Node 22 to 26 abort there).
 */
function nodeServesRestoredWorkers(): boolean {
  const directory = mkdtempSync(path.join(os.tmpdir(), 'ptc-snapshot-oracle-'))
  try {
    const entry = path.join(directory, 'entry.cjs')
    const blob = path.join(directory, 'entry.blob')
    writeFileSync(entry, `require('node:v8').startupSnapshot.setDeserializeMainFunction(() => {
      const worker = new (require('node:worker_threads').Worker)("require('node:child_process'); require('node:worker_threads').parentPort.postMessage('served')", { eval: true })
      worker.once('message', (answer) => process.stdout.write(answer))
    })`)
    execFileSync(process.execPath, ['--snapshot-blob', blob, '--build-snapshot', entry], { stdio: 'ignore' })
    return execFileSync(process.execPath, ['--snapshot-blob', blob], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }) === 'served'
  } catch {
    return false
  } finally {
    rmSync(directory, { recursive: true, force: true })
  }
}

const RESTORES = process.platform === 'linux' && nodeServesRestoredWorkers()

describe.skipIf(process.platform !== 'linux' || RESTORES)('the process tier\'s startup snapshot, where Node cannot serve its worker threads', () => {
  it('no helper starts from it, and a program\'s worker thread that starts a subprocess runs', async () => {
    const env = await startRuntime({ isolation: 'process', poolSize: 0 })
    try {
      // Longer than making and proving it takes: a proof that passed would show within this.
      const until = Date.now() + 4_000
      while (Date.now() < until) {
        expect((await env.run(SNAPSHOT_OF_HELPER)).value).toBe(null)
        await sleep(100)
      }
      const result = await env.run(`
        const { Worker } = await import('node:worker_threads')
        const worker = new Worker("require('node:child_process').execFileSync('true'); require('node:worker_threads').parentPort.postMessage('spawned')", { eval: true })
        return await new Promise((resolve) => worker.once('message', resolve))`)
      expect(result.error).toBeUndefined()
      expect(result.value).toBe('spawned')
    } finally {
      await env.dispose()
    }
  })
})

describe.skipIf(!RESTORES)('the process tier\'s startup snapshot', () => {
  it('helpers start from it once it is made, and each one draws its own randomness, calls tools and prints', async () => {
    const env = await startRuntime({ isolation: 'process', poolSize: 0 })
    try {
      await snapshotInUse(env)
      const program = `
        const bytes = crypto.getRandomValues(new Uint8Array(16))
        console.log('echo', await tools.echo({ n: 2 }))
        return [${RESTORED}, Math.random(), crypto.randomUUID(), Buffer.from(bytes).toString('hex'), process.pid]`
      const tools = { echo: async (value: { n: number }) => value }
      const [first, second] = await Promise.all([1, 2].map(() => env.run(program, { bindings: [{ global: 'tools', functions: tools }] })))
      for (const result of [first!, second!]) {
        expect(result.error).toBeUndefined()
        expect(textOf(result)).toBe('echo { n: 2 }\n')
        expect((result.value as unknown[])[0]).toBe(true)
      }
      const [a, b] = [first!.value as unknown[], second!.value as unknown[]]
      for (let at = 1; at <= 3; at++) expect(a[at]).not.toBe(b[at])
    } finally {
      await env.dispose()
    }
  })

  it('a program in a helper started from it starts worker threads and Node children of its own, and may not signal its own process', async () => {
    const env = await startRuntime({ isolation: 'process', poolSize: 0 })
    try {
      await snapshotInUse(env)
      const result = await env.run(`
        const { Worker } = await import('node:worker_threads')
        const seen = await new Promise((resolve, reject) => {
          const worker = new Worker('require("node:worker_threads").parentPort.postMessage(process.cwd())', { eval: true })
          worker.once('message', resolve)
          worker.once('error', reject)
        })
        let refused = false
        try { process.kill(process.pid, 'SIGKILL') } catch { refused = true }
        // A child started as fork() starts one, with the helper's execArgv.
        const child = (await import('node:child_process')).spawnSync(process.execPath, [...process.execArgv, '-e', 'process.stdout.write("child")'], { encoding: 'utf8' })
        return [${RESTORED}, seen === process.cwd(), refused, child.stdout]`)
      expect(result.error).toBeUndefined()
      expect(result.value).toEqual([true, true, true, 'child'])
    } finally {
      await env.dispose()
    }
  })

  it('a program in a helper started from it fetches from an allowed host through the broker', async () => {
    const server = http.createServer((request, response) => response.writeHead(200, { 'content-type': 'text/plain' }).end(`hello ${request.url}`))
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    const origin = `127.0.0.1:${(server.address() as AddressInfo).port}`
    const env = await startRuntime({ isolation: 'process', poolSize: 0, sandbox: { mode: 'workspace-write', network: { allow: [origin] } } })
    try {
      await snapshotInUse(env)
      const result = await env.run(`
        const response = await fetch('http://${origin}/there', { headers: new Headers({ accept: 'text/plain' }) })
        return [${RESTORED}, response instanceof Response, response.status, await response.text()]`)
      expect(result.error).toBeUndefined()
      expect(result.value).toEqual([true, true, 200, 'hello /there'])
    } finally {
      await env.dispose()
      server.close()
    }
  })

  it('no program can reach it: no descriptor or path leads to it, and later helpers still start from it', async () => {
    const env = await startRuntime({ isolation: 'process', poolSize: 0 })
    try {
      await snapshotInUse(env)
      // Every descriptor the helper holds, and where it leads: the snapshot is a file without a name.
      const program = `
        const fs = await import('node:fs')
        return fs.readdirSync('/proc/self/fd').map((fd) => { try { return fs.readlinkSync('/proc/self/fd/' + fd) } catch { return '' } })`
      const result = await env.run(program)
      expect(result.error).toBeUndefined()
      const leads = result.value as string[]
      expect(leads.length).toBeGreaterThan(3)
      expect(leads.filter((target) => target.includes('(deleted)'))).toEqual([])
      expect((await env.run(SNAPSHOT_OF_HELPER)).value).toBe('/proc/self/fd/6')
    } finally {
      await env.dispose()
    }
  })
})
