/**
 * Retained state as a caller sees it, on both hosts: the owner's queue knows cancellation,
 * release never hangs, one owner has one environment whatever the run's cwd, and every loss of
 * state is told to the next run.
 */
import { mkdirSync, mkdtempSync, realpathSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { leakedSince, resourceBaseline, type ResourceSnapshot } from '../helpers/leaks.js'
import { startRuntime, textOf } from '../helpers/runtime.js'

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

describe.each(['process', 'thread'] as const)('retained state on the %s host', (isolation) => {
  let env: Awaited<ReturnType<typeof startRuntime>>
  let baseline: ResourceSnapshot
  let first: string
  let second: string
  beforeAll(async () => {
    baseline = await resourceBaseline()
    first = realpathSync(mkdtempSync(path.join(tmpdir(), 'ptc-owner-a-')))
    second = realpathSync(mkdtempSync(path.join(tmpdir(), 'ptc-owner-b-')))
    // Confined helpers see (and write) the two run directories only because the deployment says so.
    const widened = isolation === 'process' ? { sandbox: { workspaceRoot: first, writableRoots: [second] } } : {}
    env = await startRuntime({ isolation, retainState: true, programFormat: 'script', timeoutMs: 20_000, ...widened })
  })
  afterAll(async () => {
    await env.dispose()
    rmSync(first, { recursive: true, force: true })
    rmSync(second, { recursive: true, force: true })
    expect(await leakedSince(baseline)).toEqual({ threads: 0, children: [], descriptors: 0 })
  })

  it('settles a queued run at once when its signal fires; it never runs and the state stays', async () => {
    const owner = {}
    await env.run('var count = 1', { stateOwner: owner })
    const ahead = env.run('await new Promise((resolve) => setTimeout(resolve, 600)); count', { stateOwner: owner })
    const controller = new AbortController()
    const queued = env.run('count = 100', { stateOwner: owner, signal: controller.signal })
    const started = Date.now()
    controller.abort(new Error('the user gave up'))
    const aborted = await queued
    expect(Date.now() - started).toBeLessThan(500)
    expect(aborted.error).toEqual({ kind: 'abort', message: 'the user gave up' })
    expect((await ahead).value).toBe(1)
    const after = await env.run('count', { stateOwner: owner })
    expect([after.value, textOf(after)]).toEqual([1, ''])
    await env.runtime.release(owner)
  })

  it('a queued run behind an endless one still settles when aborted', async () => {
    const owner = {}
    const endless = env.run('await new Promise(() => {})', { stateOwner: owner, timeoutMs: null })
    const queued = env.run('1', { stateOwner: owner, signal: AbortSignal.timeout(200) })
    expect((await queued).error?.kind).toBe('abort')
    await env.runtime.release(owner)
    expect((await endless).error?.kind).toBe('abort')
  })

  it('release aborts the run in progress and every queued one, resolves, and the owner starts fresh with no notice', async () => {
    const owner = {}
    await env.run('var kept = "old"', { stateOwner: owner })
    const endless = env.run('while (true) {}', { stateOwner: owner, timeoutMs: null })
    const queued = [env.run('while (true) {}', { stateOwner: owner, timeoutMs: null }), env.run('kept', { stateOwner: owner })]
    await sleep(100)
    await env.runtime.release(owner)
    for (const result of await Promise.all([endless, ...queued])) {
      expect(result.error).toEqual({ kind: 'abort', message: 'the state owner was released' })
    }
    const fresh = await env.run('typeof kept', { stateOwner: owner })
    expect([fresh.value, textOf(fresh)]).toEqual(['undefined', ''])
    await env.runtime.release(owner)
  })

  it('keeps one environment for an owner whatever the cwd, and each run gets its own cwd', async () => {
    const owner = {}
    const start = await env.run('var here = process.cwd(); here', { stateOwner: owner, cwd: first })
    expect(start.value).toBe(first)
    const fs = `(await import('node:fs')).writeFileSync('mark.txt', 'x'); [here, process.cwd()]`
    const moved = await env.run(fs, { stateOwner: owner, cwd: second })
    expect(moved.value).toEqual([first, second])
    expect(realpathSync(path.join(second, 'mark.txt'))).toBe(path.join(second, 'mark.txt'))
    await env.runtime.release(owner)
  })

  it('tells the next run when a failure lost the state', async () => {
    const owner = {}
    await env.run('var lost = 1', { stateOwner: owner })
    expect((await env.run('while (true) {}', { stateOwner: owner, timeoutMs: 300 })).error?.kind).toBe('timeout')
    const next = await env.run('typeof lost', { stateOwner: owner })
    expect(next.value).toBe('undefined')
    expect(textOf(next)).toMatch(/^\[earlier state was lost because it ran out of time; this run starts in a fresh environment\]\n$/)
    await env.runtime.release(owner)
  })

  it('a retained run whose spec cwd was removed after resolve is refused at run, and the owner keeps its environment and state, untold', async () => {
    const owner = {}
    const gone = realpathSync(mkdtempSync(path.join(tmpdir(), 'ptc-owner-gone-')))
    try {
      await env.run('var kept = "still here"', { stateOwner: owner, cwd: first })
      const spec = env.runtime.resolve({ program: 'kept = "overwritten"', bindings: [], stateOwner: owner, cwd: gone })
      rmSync(gone, { recursive: true })
      await expect(env.runtime.run(spec)).rejects.toThrow(/spec\.cwd must be an existing directory/)
      const next = await env.run('kept', { stateOwner: owner, cwd: first })
      expect([next.value, textOf(next)]).toEqual(['still here', ''])
    } finally {
      await env.runtime.release(owner)
      rmSync(gone, { recursive: true, force: true })
    }
  })

  it.runIf(isolation === 'process')('a run whose cwd was removed while it waited its turn is refused as removed; the owner keeps its environment and state, untold', async () => {
    const owner = {}
    // Inside a root the sandbox shows, so only its removal keeps the helper out.
    const doomed = path.join(second, 'doomed')
    mkdirSync(doomed)
    let open!: (value: null) => void
    const gate = new Promise<null>((resolve) => (open = resolve))
    const bindings = [{ global: 'tools', functions: { gate: () => gate } }]
    try {
      await env.run('var kept = "still here"', { stateOwner: owner, cwd: first })
      const ahead = env.run('await tools.gate(); kept', { stateOwner: owner, cwd: first, bindings })
      // Admitted now, while its cwd exists; it reaches the helper only once the run ahead ends.
      const queued = env.run('kept = "overwritten"', { stateOwner: owner, cwd: doomed })
      rmSync(doomed, { recursive: true })
      open(null)
      expect((await ahead).value).toBe('still here')
      // Named as what happened, not as a sandbox that cannot be set up.
      expect((await queued).error).toEqual({ kind: 'exception', message: `the run's cwd ${doomed} no longer exists: it was removed after the run was admitted` })
      const next = await env.run('[kept, process.cwd()]', { stateOwner: owner, cwd: first })
      expect([next.value, textOf(next)]).toEqual([['still here', first], ''])
    } finally {
      open(null)
      await env.runtime.release(owner)
      rmSync(doomed, { recursive: true, force: true })
    }
  })

  it('refuses state owners that would be shared by value', () => {
    for (const owner of ['conversation-1', 7, null]) {
      expect(() => env.runtime.resolve({ program: '1', bindings: [], stateOwner: owner as unknown as object })).toThrow(
        /stateOwner must be an object or a function/,
      )
    }
  })

  it('moves a kept environment back and forth between cwds: every run, its subprocesses and (in a helper) its process see their own', async () => {
    const owner = {}
    // The process's own working directory, which the runtime's cwd emulation does not rewrite:
    // on the process host it is the helper's, on the thread host the host's.
    const real = `(await import('node:fs')).readlinkSync('/proc/self/cwd')`
    const pwd = `[process.cwd(), (await import('node:child_process')).execSync('pwd').toString().trim(), ${real}]`
    // A helper moves only when a run's cwd differs from the one it is in; runs in the same cwd
    // reach its worker directly, so each of these paths runs twice in a row.
    for (const cwd of [first, second, second, first, first, second]) {
      const own = isolation === 'process' ? cwd : process.cwd()
      expect((await env.run(pwd, { stateOwner: owner, cwd })).value).toEqual([cwd, cwd, own])
    }
    await env.runtime.release(owner)
  })

  it('re-checks at run time that the spec cwd still exists', async () => {
    const gone = realpathSync(mkdtempSync(path.join(tmpdir(), 'ptc-owner-gone-')))
    const spec = env.runtime.resolve({ program: '1', bindings: [], cwd: gone })
    rmSync(gone, { recursive: true })
    await expect(env.runtime.run(spec)).rejects.toThrow(/spec\.cwd must be an existing directory/)
  })
})

describe('idle release', () => {
  it('tells the owner next run that its state was discarded after idleMs', async () => {
    const env = await startRuntime({ retainState: true, programFormat: 'script', idleMs: 100 })
    try {
      const owner = {}
      await env.run('var idle = 1', { stateOwner: owner })
      await sleep(400)
      const next = await env.run('typeof idle', { stateOwner: owner })
      expect(next.value).toBe('undefined')
      expect(textOf(next)).toMatch(/earlier state was lost because it was idle for longer than 100 ms \(idleMs\)/)
    } finally {
      await env.dispose()
    }
  })
})

describe('scoped-repl and the initializer', () => {
  it.each([true, false])('programs see copies of the initializer declarations (retained: %s)', async (retained) => {
    const env = await startRuntime({ retainState: true, programFormat: 'scoped-repl' })
    try {
      const unregister = env.runtime.registerEnvironmentInitializer('const helper = (x) => x * 2; var v = 2')
      const options = retained ? { stateOwner: {} } : {}
      expect((await env.run('typeof helper === "function" ? helper(v) : "hidden"', options)).value).toBe(4)
      if (retained) expect((await env.run('helper(v + 1)', options)).value).toBe(6)
      await unregister()
    } finally {
      await env.dispose()
    }
  })
})

describe('misuse', () => {
  it('refuses an unknown config key, naming the closest known one', async () => {
    await expect(startRuntime({ timeoutMS: 5 } as never)).rejects.toThrow(/config\.timeoutMS is not a known option; did you mean timeoutMs\?/)
  })

  it('release after disposal rejects like the other methods', async () => {
    const env = await startRuntime({ retainState: true })
    const runtime = env.runtime
    await env.dispose()
    await expect(runtime.release({})).rejects.toThrow(/release\(\) after disposal/)
  })
})
