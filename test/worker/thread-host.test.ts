import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest'
import { leakedSince, resourceBaseline, type ResourceSnapshot } from '../helpers/leaks.js'
import { ON_CONTAINER, startRuntime } from '../helpers/runtime.js'
import { marker, processesMatching } from '../helpers/sandbox.js'

const REFUSAL = /isolation: 'process'/

/** Runs every attempt in the program and reports, per attempt, 'allowed' or the refusal message. */
const attempts = (list: string) => `
  const outcomes = []
  for (const attempt of [${list}]) {
    try { await attempt(); outcomes.push('allowed') } catch (error) { outcomes.push(String(error?.message)) }
  }
  return outcomes`

/** Waits until no process carries `needle` on its command line, or returns those still alive. */
async function survivors(needle: string): Promise<number[]> {
  for (let waited = 0; waited < 2000; waited += 50) {
    if (processesMatching(needle).length === 0) return []
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  const alive = processesMatching(needle)
  for (const pid of alive) process.kill(pid, 'SIGKILL')
  return alive
}

describe('the thread host refuses what reaches into the host process', () => {
  let env: Awaited<ReturnType<typeof startRuntime>>
  let baseline: ResourceSnapshot
  beforeAll(async () => {
    baseline = await resourceBaseline()
    env = await startRuntime({ isolation: 'thread', timeoutMs: 15_000, retainState: true })
  })
  afterAll(async () => {
    await env.dispose()
    expect(await leakedSince(baseline)).toEqual({ threads: 0, children: [], descriptors: 0 })
  })

  it('refuses node:inspector and inspector/promises by every import path, naming the process isolation', async () => {
    const result = await env.run(attempts(`
      async () => (await import('node:inspector')).Session,
      async () => (await import('inspector')).url(),
      async () => (await import('node:inspector/promises')).Session,
      async () => (await import('inspector/promises')).open,
      async () => (await import('inspector/promises')).Session,
      async () => (await import('node:module')).createRequire('/')('inspector').Session,
      async () => (await import('node:module')).createRequire('/')('node:inspector/promises').Session,
      () => process.getBuiltinModule('node:inspector').Session,
      () => process.binding('inspector'),
    `))
    expect(result.error).toBeUndefined()
    expect(result.value).toHaveLength(9)
    for (const outcome of result.value as string[]) expect(outcome).toMatch(REFUSAL)
  })

  it('refuses native addons and raw bindings', async () => {
    const directory = mkdtempSync(path.join(os.tmpdir(), 'ptc-addon-'))
    onTestFinished(() => rmSync(directory, { recursive: true, force: true }))
    const result = await env.run(attempts(`
      () => process.dlopen({ exports: {} }, '/nonexistent.so'),
      async () => {
        const { writeFileSync } = await import('node:fs')
        const addon = ${JSON.stringify(directory)} + '/addon.node'
        writeFileSync(addon, 'not really native code')
        return (await import('node:module')).createRequire('/')(addon)
      },
      () => process.binding('spawn_sync'),
      () => process.binding('fs'),
      () => process._linkedBinding('anything'),
    `))
    expect(result.value).toHaveLength(5)
    for (const outcome of result.value as string[]) expect(outcome).toMatch(REFUSAL)
  })

  it("refuses signals to every thread of the host process and to the host's process group", async () => {
    const threads = readdirSync('/proc/self/task').map(Number)
    const group = Number(readFileSync('/proc/self/stat', 'utf8').split(') ')[1]!.split(' ')[2])
    const result = await env.run(`
      const { readdirSync } = await import('node:fs')
      const outcomes = {}
      for (const id of [...readdirSync('/proc/self/task').map(Number), 0, -${group}]) {
        try { process.kill(id, 'SIGCONT'); outcomes[id] = 'allowed' } catch (error) { outcomes[id] = error.code }
      }
      return outcomes`)
    const outcomes = result.value as Record<string, string>
    expect(Object.keys(outcomes).length).toBeGreaterThanOrEqual(threads.length)
    for (const [id, outcome] of Object.entries(outcomes)) expect({ id, outcome }).toEqual({ id, outcome: 'EPERM' })
  })

  it('still lets a program signal the processes it started', async () => {
    const result = await env.run(`
      const { spawn } = await import('node:child_process')
      const child = spawn('sleep', ['30'])
      await new Promise((resolve) => child.once('spawn', resolve))
      process.kill(child.pid, 'SIGTERM')
      return await new Promise((resolve) => child.once('exit', (code, signal) => resolve(signal)))`)
    expect(result.value).toBe('SIGTERM')
  })

  // Under a state owner the worker outlives the run, so only what the run reported is killed.
  it.each([
    ['execSync with &', (tag: string) => `execSync('sleep 61.${tag} > /dev/null 2>&1 &')`],
    ['execSync with nohup', (tag: string) => `execSync('nohup sleep 62.${tag} > /dev/null 2>&1 &')`],
    ['execFileSync with disown', (tag: string) => `execFileSync('bash', ['-c', 'sleep 63.${tag} > /dev/null 2>&1 & disown'])`],
    ['spawnSync with setsid', (tag: string) => `spawnSync('sh', ['-c', '(setsid sleep 64.${tag} > /dev/null 2>&1 &)'])`],
  ])('kills the background children of a synchronous shell when the run settles: %s', async (_, call) => {
    const tag = marker()
    const owner = {}
    try {
      const result = await env.run(
        `const { execSync, execFileSync, spawnSync } = await import('node:child_process')
         ${call(tag)}
         return 'started'`,
        { stateOwner: owner },
      )
      expect(result.value).toBe('started')
      expect(await survivors(tag)).toEqual([])
    } finally {
      await env.runtime.release(owner)
    }
  })

  it('marks and kills a process started through ChildProcess directly, and gives it none of the host environment', async () => {
    const tag = marker()
    const owner = {}
    process.env.PTC_THREAD_HOST_TEST_SECRET = 'not for programs'
    try {
      const result = await env.run(`
        const { ChildProcess } = await import('node:child_process')
        const start = (args, stdio) => {
          const child = new ChildProcess()
          child.spawn({ file: args[0], args, stdio })
          return child
        }
        start(['sleep', '65.${tag}'], 'ignore')
        const printer = start(['/usr/bin/env'], ['ignore', 'pipe', 'ignore'])
        let printed = ''
        printer.stdout.on('data', (chunk) => (printed += chunk))
        await new Promise((resolve) => printer.once('close', resolve))
        return printed.split('\\n').filter(Boolean).map((line) => line.split('=')[0])`, { stateOwner: owner })
      expect(result.value).toEqual(['PTC_ENVIRONMENT'])
      expect(await survivors(tag)).toEqual([])
    } finally {
      await env.runtime.release(owner)
      delete process.env.PTC_THREAD_HOST_TEST_SECRET
    }
  })

  it('leaves the ordinary synchronous subprocess API working', async () => {
    const result = await env.run(`
      const { execFileSync } = await import('node:child_process')
      return execFileSync('echo', ['hello']).toString().trim()`)
    expect(result.value).toBe('hello')
  })
})

describe('a worker in a helper process is not restricted like the thread host', () => {
  it.skipIf(ON_CONTAINER)('reaches node:inspector and process.binding there (the default isolation)', async () => {
    const env = await startRuntime({ timeoutMs: 15_000 })
    try {
      expect(env.runtime.isolation).toBe('process')
      const result = await env.run(`return [typeof (await import('node:inspector')).Session, typeof process.binding('fs')]`)
      expect(result.value).toEqual(['function', 'object'])
    } finally {
      await env.dispose()
    }
  })
})
