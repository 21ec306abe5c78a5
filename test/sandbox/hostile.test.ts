import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { leakedSince, resourceBaseline, type ResourceSnapshot } from '../helpers/leaks.js'
import { startRuntime } from '../helpers/runtime.js'
import { bwrap, marker, processesMatching, tempDirectory } from '../helpers/sandbox.js'

const prelude = `const fs = await import('node:fs'); const cp = await import('node:child_process');\n`

describe.skipIf(!bwrap)('hostile programs under a sandbox policy', () => {
  const temp = tempDirectory('ptc-sandbox-hostile')
  let env: Awaited<ReturnType<typeof startRuntime>>
  let baseline: ResourceSnapshot

  beforeAll(async () => {
    baseline = await resourceBaseline()
    env = await startRuntime({ timeoutMs: 15_000, sandbox: { mode: 'workspace-write', workspaceRoot: temp.dir } })
  })
  afterAll(async () => {
    await env.dispose()
    temp.remove()
    expect(await leakedSince(baseline)).toEqual({ threads: 0, children: [], descriptors: 0 })
  })

  /** Runs `program`, then proves the host is alive and the next run works. */
  async function survive(program: string) {
    const result = await env.run(prelude + program)
    expect(process.kill(process.pid, 0)).toBe(true)
    expect((await env.run('return "next"')).value).toBe('next')
    return result
  }

  it('survives process.kill(process.pid)', async () => {
    const result = await survive(`process.kill(process.pid, 'SIGKILL')`)
    expect(result.error?.kind).toBe('exception')
  })

  it('survives process.kill(process.ppid)', async () => {
    const result = await survive(`process.kill(process.ppid, 'SIGKILL')`)
    expect(result.error?.kind).toBe('exception')
  })

  it('survives a subprocess killing its parent (the helper) with kill -9 $PPID', async () => {
    const result = await survive(`cp.execSync('kill -9 $PPID'); await new Promise((r) => setTimeout(r, 5000))`)
    expect(result.error?.kind).toBe('worker-exit')
  })

  it('survives a subprocess killing the helper by its pid, past the JavaScript guard', async () => {
    const result = await survive(`cp.execSync('kill -9 ' + process.pid); await new Promise((r) => setTimeout(r, 5000))`)
    expect(result.error?.kind).toBe('worker-exit')
  })

  it('cannot see the host process to signal it', async () => {
    const result = await survive(`cp.execSync('kill -9 ${process.pid}', { stdio: 'pipe' })`)
    expect(result.error?.message).toMatch(/No such process/)
  })

  it('survives a small fork bomb and leaves no process behind', async () => {
    const tag = marker()
    const result = await survive(`
      cp.execSync('for i in $(seq 1 40); do setsid sh -c "sleep ${tag}" & done; sleep 0.2', { stdio: 'ignore' })
      return 'forked'`)
    expect(result.value).toBe('forked')
    expect(processesMatching(`sleep ${tag}`)).toEqual([])
  })

  it('fails a run that writes garbage to the helper channel (descriptor 3) with protocol', async () => {
    const result = await survive(`fs.writeSync(3, 'not a frame\\n'); await new Promise((r) => setTimeout(r, 5000))`)
    expect(result.error?.kind).toBe('protocol')
  })

  it('fails a run that writes a well-formed but foreign frame to the helper channel with protocol', async () => {
    const result = await survive(`fs.writeSync(3, JSON.stringify({ type: 'ready' }) + '\\n'); await new Promise((r) => setTimeout(r, 5000))`)
    expect(result.error?.kind).toBe('protocol')
  })

  it('fails a run that forges the helper\'s census (a kill answer nobody asked for) with protocol', async () => {
    const result = await survive(`fs.writeSync(3, JSON.stringify({ type: 'killed', id: 1, alone: true }) + '\\n'); await new Promise((r) => setTimeout(r, 5000))`)
    expect(result.error?.kind).toBe('protocol')
  })

  it('fails a run that floods the helper channel with one endless frame with protocol', async () => {
    const result = await survive(`const chunk = 'x'.repeat(1 << 20); for (;;) fs.writeSync(3, chunk)`)
    expect(result.error?.kind).toBe('protocol')
  })

  it('kills every descendant, even ones that left the process group, when a one-shot run settles', async () => {
    const tag = marker()
    const result = await env.run(prelude + `
      cp.spawn('setsid', ['sleep', '${tag}'], { stdio: 'ignore' }).unref()
      cp.exec('sleep ${tag}')
      await new Promise((r) => setTimeout(r, 300))
      return 'spawned'`)
    expect(result.value).toBe('spawned')
    expect(processesMatching(`sleep ${tag}`)).toEqual([])
  })
})

describe.skipIf(!bwrap)('retained environments under a sandbox policy', () => {
  const temp = tempDirectory('ptc-sandbox-retained')
  let env: Awaited<ReturnType<typeof startRuntime>>
  let baseline: ResourceSnapshot

  beforeAll(async () => {
    baseline = await resourceBaseline()
    env = await startRuntime({ retainState: true, sandbox: { mode: 'workspace-write', workspaceRoot: temp.dir } })
  })
  afterAll(async () => {
    await env.dispose()
    temp.remove()
    expect(await leakedSince(baseline)).toEqual({ threads: 0, children: [], descriptors: 0 })
  })

  it('keeps state in one helper and kills the run subprocesses at each settlement', async () => {
    const owner = {}
    const tag = marker()
    const first = await env.run(prelude + `globalThis.count = 1; cp.spawn('sleep', ['${tag}']); await new Promise((r) => setTimeout(r, 200)); return 'spawned'`, { stateOwner: owner })
    expect(first.value).toBe('spawned')
    expect(processesMatching(`sleep ${tag}`)).toEqual([])
    expect((await env.run('return ++globalThis.count', { stateOwner: owner })).value).toBe(2)
    await env.runtime.release(owner)
  })

  it('leaves nothing behind once the owner is released, even what escaped the process group', async () => {
    const owner = {}
    const tag = marker()
    await env.run(prelude + `cp.spawn('setsid', ['sleep', '${tag}'], { stdio: 'ignore' }).unref(); await new Promise((r) => setTimeout(r, 200))`, { stateOwner: owner })
    await env.runtime.release(owner)
    expect(processesMatching(`sleep ${tag}`)).toEqual([])
  })

  it('starts a fresh helper with a notice after the previous one was killed', async () => {
    const owner = {}
    await env.run('globalThis.kept = 1', { stateOwner: owner })
    const killed = await env.run(prelude + `cp.execSync('kill -9 $PPID'); await new Promise((r) => setTimeout(r, 5000))`, { stateOwner: owner })
    expect(killed.error?.kind).toBe('worker-exit')
    const next = await env.run('return typeof globalThis.kept', { stateOwner: owner })
    expect(next.value).toBe('undefined')
    expect(next.output[0]).toEqual({ type: 'text', text: expect.stringMatching(/earlier state was lost/) })
    await env.runtime.release(owner)
  })
})
